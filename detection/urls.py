"""Detection API, mounted under /api/v1/."""
from django.urls import path

from detection import api

urlpatterns = [
    path("methods/", api.MethodListApi.as_view(), name="api-method-list"),
    path("methods/<str:name>/", api.MethodDetailApi.as_view(), name="api-method-detail"),
]
