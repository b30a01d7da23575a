"""Benchmark pages, mounted under /benchmarks/."""
from django.urls import path

from benchmarks import from_annotation, views

app_name = "benchmarks"

urlpatterns = [
    path("gold-sets/from-batch/<int:batch_id>/", from_annotation.gold_set_from_batch, name="gold-set-from-batch"),
    path("", views.index, name="index"),
    path("versions/<int:pk>/", views.version_detail, name="version"),
    path("versions/<int:pk>/approve/", views.version_approve_page, name="version-approve"),
    path("runs/<int:pk>/", views.run_detail, name="run"),
    path("runs/<int:pk>/report.json", views.run_report_json, name="run-json"),
    path("runs/<int:pk>/<str:table>.csv", views.run_report_csv, name="run-csv"),
    path("runs/<int:pk>/run.trec", views.run_trec, {"what": "run"}, name="run-trec"),
    path("runs/<int:pk>/qrels.txt", views.run_trec, {"what": "qrels"}, name="run-qrels"),
    path("gold-sets/<int:pk>/", views.gold_set_detail, name="gold-set"),
    path("gold-sets/<int:pk>/pairs.csv", views.gold_set_csv, name="gold-set-csv"),
    path("gold-sets/<int:pk>/pairs.json", views.gold_set_json, name="gold-set-json"),
    path("similarity-runs/<int:pk>/", views.similarity_run_detail, name="similarity-run"),
    path("similarity-runs/<int:pk>/report.json", views.similarity_run_json, name="similarity-run-json"),
    path("similarity-runs/<int:pk>/predictions.csv", views.similarity_run_csv, name="similarity-run-csv"),
    path("models/", views.trained_models, name="models"),
    path("suite/", views.suite_page, name="suite"),
    path("pilots/", views.pilot_index, name="pilots"),
    path("pilots/<int:pk>/", views.pilot_detail, name="pilot"),
    path("pilots/<int:pk>/rows.csv", views.pilot_csv, name="pilot-csv"),
]
