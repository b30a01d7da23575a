"""Workbench pages, mounted under /workbench/."""
from django.urls import path

from workbench import views

app_name = "workbench"

urlpatterns = [
    path("", views.index, name="index"),
    path("runs/<int:pk>/", views.run_page, name="run"),
    path("runs/<int:pk>/export/", views.run_export, name="export"),
    path("runs/<int:pk>/rename/", views.run_rename, name="rename"),
    path("runs/<int:pk>/delete/", views.run_delete, name="delete"),
    path("runs/<int:pk>/promote/", views.run_promote, name="promote"),
    path("compare/", views.compare_page, name="compare"),
    path("compare/query/", views.compare_query_page, name="compare-query"),
    path("compare/detections/", views.compare_detections_page, name="compare-detections"),
]
