from django.contrib import admin

from annotation.models import AnnotationSet, Assignment, Batch, Judgement, Membership, Pair, Project, Verse


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "title", "owner", "set_size", "overlap_per_set", "overlap_mode")
    inlines = [MembershipInline]


@admin.register(Verse)
class VerseAdmin(admin.ModelAdmin):
    list_display = ("verse_id", "project", "text", "type_id", "group_id")
    list_filter = ("project",)
    search_fields = ("verse_id", "text")


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "reference", "pilot", "status", "n_candidates", "n_pairs")
    list_filter = ("project", "status", "pilot")


@admin.register(Judgement)
class JudgementAdmin(admin.ModelAdmin):
    list_display = ("id", "annotator", "batch", "pair", "chosen", "chose_left", "response_ms", "created", "undone_at")
    list_filter = ("batch__project", "annotator")
    raw_id_fields = ("assignment", "pair", "set", "chosen", "left", "batch")


admin.site.register([Pair, AnnotationSet, Assignment], admin.ModelAdmin)
