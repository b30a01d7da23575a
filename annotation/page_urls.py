from django.urls import path

from annotation import dashboard, planning, views

app_name = "annotation"
urlpatterns = [
    path("annotate/<int:batch_id>/", views.annotate, name="annotate"),
    path("projects/", views.project_list, name="projects"),
    path("projects/new/", views.project_create, name="project-create"),
    path("projects/<int:pk>/", views.project_detail, name="project"),
    path("projects/<int:pk>/dashboard/", dashboard.dashboard, name="dashboard"),
    path("projects/<int:pk>/dashboard/recompute/", dashboard.recompute, name="dashboard-recompute"),
    path("projects/<int:pk>/planning/", planning.planning, name="planning"),
    path("projects/<int:pk>/planning/run/", planning.planning_run, name="planning-run"),
    path("projects/<int:pk>/members/", views.member_add, name="member-add"),
    path("projects/<int:pk>/verses/upload/", views.verses_upload, name="verses-upload"),
    path("projects/<int:pk>/batches/new/", views.batch_create, name="batch-create"),
    path("projects/<int:pk>/batches/<int:batch_id>/status/", views.batch_status, name="batch-status"),
]
