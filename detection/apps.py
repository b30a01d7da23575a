from django.apps import AppConfig


class DetectionConfig(AppConfig):
    name = "detection"

    def ready(self):
        # Models are names in this directory (or hub ids), never paths from users.
        from django.conf import settings

        from detection.methods import model_store

        model_store.configure(settings.MODELS_DIR)
