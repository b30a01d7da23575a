from django.contrib.auth import views as auth_views
from django.urls import path

from core.throttling import ThrottledLoginView
from frontend import views

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", ThrottledLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("jobs/", views.jobs_page, name="jobs"),
    path("jobs/<int:pk>/", views.job_page, name="job"),
    path("account/token/", views.api_token, name="account-token"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon),
]
