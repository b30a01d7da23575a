from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    name = "workbench"
    verbose_name = "Researcher workbench"

    def ready(self) -> None:
        from frontend.sections import register as register_section
        from workbench import jobs  # noqa: F401  (registers the detection job kind)

        register_section("workbench/_home_section.html", "researcher", order=45)
