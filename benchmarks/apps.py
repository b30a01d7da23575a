from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    name = "benchmarks"

    def ready(self) -> None:
        from benchmarks import jobs  # noqa: F401  (registers the job kinds and the segment set "corpus")
        from benchmarks.demo import load_demo_benchmarks
        from core.demo_loaders import register as register_demo
        from frontend.sections import register as register_section

        register_section("benchmarks/_home_section.html", "researcher", order=40)
        register_demo("benchmarks", load_demo_benchmarks, order=60)
