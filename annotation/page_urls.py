from django.urls import path

from annotation import dashboard, lead_views, planning, views

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
    path("projects/<int:pk>/settings/", lead_views.project_settings, name="project-settings"),
    path("projects/<int:pk>/members/<int:user_id>/remove/", lead_views.member_remove, name="member-remove"),
    path("projects/<int:pk>/members/new-account/", lead_views.account_create, name="account-create"),
    path("projects/<int:pk>/invitations/", lead_views.invitation_create, name="invitation-create"),
    path("projects/<int:pk>/invitations/<int:invitation_id>/revoke/", lead_views.invitation_revoke,
         name="invitation-revoke"),
    path("invite/<str:token>/", lead_views.invitation_accept, name="invitation"),
    path("projects/<int:pk>/batches/<int:batch_id>/attention/", lead_views.attention_checks, name="attention-checks"),
]
