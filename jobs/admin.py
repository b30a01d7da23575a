from django.contrib import admin

from jobs.models import Job


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "queue", "status", "progress", "owner", "created", "finished")
    list_filter = ("status", "queue", "kind")
    search_fields = ("kind", "error")
    readonly_fields = ("created", "started", "finished", "heartbeat", "worker", "celery_task_id")
