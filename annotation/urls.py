from django.urls import path

from annotation import api, export_api

urlpatterns = [
    path("projects/", api.ProjectListApi.as_view(), name="api-project-list"),
    path("projects/<int:pk>/", api.ProjectDetailApi.as_view(), name="api-project-detail"),
    path("projects/<int:pk>/members/", api.MemberApi.as_view(), name="api-project-members"),
    path("projects/<int:pk>/verses/", api.VerseListApi.as_view(), name="api-project-verses"),
    path("projects/<int:pk>/verses/search/", api.VerseSearchApi.as_view(), name="api-project-verse-search"),
    path("projects/<int:pk>/verses/import/", api.VerseImportApi.as_view(), name="api-project-verse-import"),
    path("projects/<int:pk>/batches/", api.BatchListApi.as_view(), name="api-project-batches"),
    path("projects/<int:pk>/progress/", api.ProgressApi.as_view(), name="api-project-progress"),
    path("batches/<int:pk>/", api.BatchDetailApi.as_view(), name="api-batch-detail"),
    path("batches/<int:pk>/next-set/", api.NextSetApi.as_view(), name="api-batch-next-set"),
    path("judgements/", api.JudgementApi.as_view(), name="api-judgement-submit"),
    path("sets/<int:pk>/undo/", api.UndoApi.as_view(), name="api-set-undo"),
    path("projects/<int:pk>/scores/", export_api.ProjectScoresApi.as_view(), name="api-project-scores"),
    path("projects/<int:pk>/judgements/", export_api.ProjectJudgementsApi.as_view(), name="api-project-judgements"),
    path("projects/<int:pk>/agreement/", export_api.ProjectAgreementApi.as_view(), name="api-project-agreement"),
    path("batches/<int:pk>/scores/", export_api.BatchScoresApi.as_view(), name="api-batch-scores"),
    path("me/batches/", api.MyProjectsApi.as_view(), name="api-my-batches"),
]
