from django.urls import path

from jobs import api

urlpatterns = [
    path("jobs/", api.JobListApi.as_view(), name="api-job-list"),
    path("jobs/<int:pk>/", api.JobDetailApi.as_view(), name="api-job-detail"),
    path("jobs/<int:pk>/cancel/", api.JobCancelApi.as_view(), name="api-job-cancel"),
]
