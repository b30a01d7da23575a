"""Corpus pages, mounted under /corpora/."""
from django.urls import path

from detection import views

app_name = "corpora"

urlpatterns = [
    path("", views.corpora, name="index"),
    path("<slug:name>/", views.corpus, name="corpus"),
    path("<slug:name>/search/", views.corpus_search, name="search"),
    path("<slug:name>/works/<str:key>/", views.corpus_work, name="work"),
]
