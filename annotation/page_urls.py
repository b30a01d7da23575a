from django.urls import path

from annotation.views import annotator, dashboard, lead, planning, projects

app_name = "annotation"
urlpatterns = [
    path("annotate/<int:batch_id>/", annotator.annotate, name="annotate"),
    path("projects/", projects.project_list, name="projects"),
    path("projects/new/", projects.project_create, name="project-create"),
    path("projects/<int:pk>/", projects.project_detail, name="project"),
    path("projects/<int:pk>/dashboard/", dashboard.dashboard, name="dashboard"),
    path("projects/<int:pk>/dashboard/progress/", dashboard.progress, name="dashboard-progress"),
    path("projects/<int:pk>/dashboard/recompute/", dashboard.recompute, name="dashboard-recompute"),
    path("projects/<int:pk>/planning/", planning.planning, name="planning"),
    path("projects/<int:pk>/planning/run/", planning.planning_run, name="planning-run"),
    path("projects/<int:pk>/members/", projects.member_add, name="member-add"),
    path("projects/<int:pk>/verses/upload/", projects.verses_upload, name="verses-upload"),
    path("projects/<int:pk>/batches/new/", projects.batch_create, name="batch-create"),
    path("projects/<int:pk>/batches/<int:batch_id>/status/", projects.batch_status, name="batch-status"),
    path("projects/<int:pk>/batches/<int:batch_id>/rename/", projects.batch_rename, name="batch-rename"),
    path("projects/<int:pk>/batches/<int:batch_id>/delete/", projects.batch_delete, name="batch-delete"),
    path("projects/<int:pk>/settings/", lead.project_settings, name="project-settings"),
    path("projects/<int:pk>/members/<int:user_id>/remove/", lead.member_remove, name="member-remove"),
    path("projects/<int:pk>/members/new-account/", lead.account_create, name="account-create"),
    path("projects/<int:pk>/invitations/", lead.invitation_create, name="invitation-create"),
    path("projects/<int:pk>/invitations/<int:invitation_id>/revoke/", lead.invitation_revoke,
         name="invitation-revoke"),
    path("invite/<str:token>/", lead.invitation_accept, name="invitation"),
    path("projects/<int:pk>/batches/<int:batch_id>/attention/", lead.attention_checks, name="attention-checks"),
]
