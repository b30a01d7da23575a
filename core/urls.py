from django.urls import path

from core import api

urlpatterns = [
    path("me/", api.MeApi.as_view(), name="api-me"),
    path("auth/token/", api.TokenApi.as_view(), name="api-token"),
]
