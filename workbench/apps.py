from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    name = "workbench"
    verbose_name = "Researcher workbench"

    def ready(self) -> None:
        from core.demo_loaders import register as register_demo
        from frontend.sections import register as register_section
        from workbench import jobs  # noqa: F401  (registers the detection job kind)
        from workbench.demo import load_demo_workbench

        register_section("workbench/_home_section.html", "researcher", order=45)
        register_demo("workbench", load_demo_workbench, order=70)
