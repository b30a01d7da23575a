from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from annotation import demo, jobs  # noqa: F401  (registers job kinds)
        from core.demo_loaders import register as register_demo
        from frontend.sections import register as register_section

        register_section("annotation/_home_annotator.html", "annotator", order=10)
        register_section("annotation/_home_lead.html", "lead", order=20)
        register_demo("annotation", demo.load_demo_projects, order=10)
