from django.apps import AppConfig


class DetectionConfig(AppConfig):
    name = "detection"

    def ready(self):
        # Models are names in this directory (or hub ids), never paths from users.
        from django.conf import settings

        from detection.methods.infrastructure import model_store

        model_store.configure(settings.MODELS_DIR)
        from core import demo_loaders
        from detection import detection_jobs, jobs  # noqa: F401  (registers the job kinds)
        from detection.demo import load_demo_vectors

        demo_loaders.register("detection.vectors", load_demo_vectors, order=40)
