"""The neural trainers take one options value (issue 27; sentence-transformers' training arguments are the model):
`CrossEncoderOptions` and `BiEncoderOptions` extend the shared `TrainingOptions`, check what they declare, and
a training request's validated parameters map into them (the page, the API and the command share that path)."""
import inspect

import pytest

from detection.methods.rerank import bi_encoder as BE
from detection.methods.rerank import cross_encoder as CE
from detection.methods.rerank.neural import TrainingOptions
from detection.services.training import NEURAL_DEFAULTS


def test_the_trainers_take_data_an_output_folder_callbacks_and_one_options_value():
    for train, options in ((CE.train, CE.CrossEncoderOptions), (BE.train, BE.BiEncoderOptions)):
        sig = inspect.signature(train)
        assert sig.parameters["options"].annotation in (options, options.__name__)
        assert len(sig.parameters) <= 9, list(sig.parameters)
        assert {"epochs", "lr", "batch_size", "seed", "device", "max_steps"}.isdisjoint(sig.parameters)


def test_a_requests_parameters_map_into_the_options():
    ce = CE.CrossEncoderOptions.from_params({**NEURAL_DEFAULTS["cross-encoder"], "epochs": 2, "neg_ratio": 3})
    assert isinstance(ce, TrainingOptions) and ce.epochs == 2 and ce.effective_batch == 64
    assert ce.class_probs == "0.8,0.1,0.1" and not hasattr(ce, "neg_ratio")  # a data option stays with the caller
    be = BE.BiEncoderOptions.from_params({**NEURAL_DEFAULTS["bi-encoder"], "loss": "mnrl", "max_steps": 5})
    assert (be.loss, be.max_steps, be.warmup, be.device) == ("mnrl", 5, 0.1, "auto")
    assert be.as_dict()["loss"] == "mnrl" and set(TrainingOptions().as_dict()) < set(be.as_dict())


@pytest.mark.parametrize("options, kwargs, message", [
    (CE.CrossEncoderOptions, {"batch_size": 24, "effective_batch": 64}, "effective_batch must be a multiple"),
    (BE.BiEncoderOptions, {"loss": "triplet"}, "loss must be one of online-contrastive, mnrl"),
    (TrainingOptions, {"epochs": 0}, "epochs and batch_size must be at least 1"),
    (TrainingOptions, {"max_steps": 0}, "max_steps must be at least 1"),
])
def test_options_refuse_what_they_cannot_train_with(options, kwargs, message):
    with pytest.raises(ValueError, match=message):
        options(**kwargs)
