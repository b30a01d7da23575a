"""A registered feature classifier stores its method configuration with its digest (read through
``MethodConfig.from_json``); a neural model's params are trainer options, so it stores none; the migration fills
the configuration of models registered before the field existed."""
import pytest

from detection.methods.registry import configure
from tests.detection.methods.conftest import stored_config


@pytest.mark.django_db
def test_a_feature_classifier_row_stores_its_configuration_and_a_neural_one_none():
    from detection.models import TrainedModel

    feature = TrainedModel.objects.create(name="m/fold-0", kind="feature-classifier", method="feature-ltr",
                                          params={"C": 1.0})
    neural = TrainedModel.objects.create(name="ce/fold-0", kind="cross-encoder", method="cross-encoder",
                                         params={"epochs": 4, "lr": 2e-5})
    assert TrainedModel.objects.get(pk=feature.pk).method_config == \
        configure("feature-ltr", {"C": 1.0}, kind="reranker")
    assert TrainedModel.objects.get(pk=neural.pk).config is None
    assert TrainedModel.objects.get(pk=neural.pk).method_config is None


def test_the_migration_fills_the_configuration_of_registered_models(migrate_back_and_forth):
    def old_rows(apps):
        Old = apps.get_model("detection", "TrainedModel")
        Old.objects.create(name="old/fold-0", kind="feature-classifier", method="feature-logreg", params={"C": 0.5})
        Old.objects.create(name="old-ce/fold-0", kind="cross-encoder", method="cross-encoder", params={"epochs": 1})

    migrate_back_and_forth([("detection", "0001_trained_model")],
                           [("detection", "0002_trainedmodel_method_config_digest")], old_rows)
    from detection.models import TrainedModel

    assert TrainedModel.objects.get(name="old/fold-0").config == \
        stored_config("feature-logreg", "reranker", {"C": 0.5}).to_json()
    assert TrainedModel.objects.get(name="old-ce/fold-0").config is None
