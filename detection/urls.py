"""Detection API, mounted under /api/v1/."""
from django.urls import path

from detection import api, corpus_api

urlpatterns = [
    path("methods/", api.MethodListApi.as_view(), name="api-method-list"),
    path("methods/<str:name>/", api.MethodDetailApi.as_view(), name="api-method-detail"),
    path("corpora/", corpus_api.CorpusListApi.as_view(), name="api-corpus-list"),
    path("corpora/<slug:name>/", corpus_api.CorpusDetailApi.as_view(), name="api-corpus-detail"),
    path("corpora/<slug:name>/search/", corpus_api.CorpusSearchApi.as_view(), name="api-corpus-search"),
    path("corpora/<slug:name>/works/<str:key>/", corpus_api.WorkLinesApi.as_view(), name="api-corpus-work"),
    path("corpora/<slug:name>/build/", corpus_api.CorpusBuildApi.as_view(), name="api-corpus-build"),
]
