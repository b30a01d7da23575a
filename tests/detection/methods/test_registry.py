"""The one method registry: declarations, validation of user parameters, internal arguments, queues."""
import pytest

from detection.methods import ParamError, UnknownMethod, get_retriever, registry
from detection.methods.infrastructure import model_store
from detection.methods.registry import MethodSpec, Param


def test_every_builtin_declares_kind_language_and_queue():
    specs = registry.specs()
    assert {s.kind for s in specs} <= set(registry.KINDS)
    assert {"bm25-lemma", "tesserae", "w2v-bigram", "levenshtein", "sentence_transformer"} <= {s.name for s in specs}
    assert registry.get_spec("bm25-lemma").queue == "cpu"
    assert registry.get_spec("sentence_transformer").queue == "gpu"
    assert registry.names(kind="retriever", language="grc") == []
    for spec in specs:
        d = spec.as_dict()
        assert d["name"] == spec.name and all({"name", "type", "default"} <= set(p) for p in d["params"])
        # defaults of every declaration pass its own validation
        assert spec.validate({}) == spec.defaults()


@pytest.mark.parametrize("params, message", [
    ({"nope": 1}, "unknown parameter 'nope' for method 'bm25-lemma' \\(allowed: k1, b, stopwords\\)"),
    ({"k1": True}, "parameter 'k1': must be a number, not a boolean"),
    ({"k1": "nan"}, "finite"),
    ({"k1": -1}, "must be ≥ 0.0"),
    ({"stopwords": "maybe"}, "must be true or false"),
    ([("k1", 1)], "must be a JSON object"),
])
def test_bad_user_parameters_name_the_key(params, message):
    with pytest.raises(ParamError, match=message):
        registry.validate("bm25-lemma", params)


def test_values_are_coerced_strictly():
    assert registry.validate("bm25-lemma", {"k1": "1.2", "b": 0, "stopwords": "false"}) == {
        "k1": 1.2, "b": 0.0, "stopwords": False}
    assert registry.validate("tesserae", {"stop_top": "12"}) == {"stop_top": 12}
    for bad in ("１２", "²", "1" * 30, 10**20):
        with pytest.raises(ParamError):
            registry.validate("tesserae", {"stop_top": bad})


def test_unknown_method_lists_the_available_ones():
    with pytest.raises(UnknownMethod, match="unknown method 'zzz'; available: .*bm25-lemma"):
        registry.get_spec("zzz")
    with pytest.raises(ParamError, match="is a pair_scorer, not a retriever"):
        registry.validate("levenshtein", {}, kind="retriever")


def test_internal_arguments_only_from_platform_code(tmp_path):
    """cache_dir/n_jobs are internal: build() refuses them as user params, get_retriever passes them through."""
    with pytest.raises(ParamError, match="unknown parameter 'cache_dir'"):
        registry.build("bm25-lemma", {"cache_dir": str(tmp_path)})
    r = get_retriever("bm25-lemma", cache_dir=tmp_path, k1=1.2)
    assert r.k1 == 1.2
    with pytest.raises(TypeError, match="takes no internal argument"):
        registry.build("bm25-lemma", {}, model_path="/x")


def test_a_toy_method_registers_and_builds():
    class Toy:
        def __init__(self, alpha, mode):
            self.alpha, self.mode = alpha, mode

    spec = MethodSpec("toy-test", "reranker", Toy, "a toy", languages=("la", "grc"), supervised=True,
                      params=(Param("alpha", "float", 0.5, min=0, max=1),
                              Param("mode", "choice", "a", choices=("a", "b"))))
    registry.register(spec)
    try:
        toy = registry.build("toy-test", {"mode": "b"})
        assert (toy.alpha, toy.mode, toy.name) == (0.5, "b", "toy-test")
        assert "toy-test" in registry.names(kind="reranker", language="grc")
        with pytest.raises(ValueError, match="already registered"):
            registry.register(spec)
        with pytest.raises(ParamError, match="must be one of a, b"):
            registry.build("toy-test", {"mode": "c"})
    finally:
        registry.unregister("toy-test")


@pytest.mark.parametrize("name", ["/etc/passwd", "../x", "a/../b", "~root", ".hidden", "a/b/c", "a b", ""])
def test_model_names_are_never_paths(name):
    with pytest.raises(ValueError, match="not a path"):
        model_store.check_model_name(name)


def test_model_names_resolve_in_the_models_directory(tmp_path):
    (tmp_path / "latin-fasttext").mkdir()
    with model_store.using(tmp_path):
        assert model_store.resolve("latin-fasttext") == str(tmp_path / "latin-fasttext")
        assert model_store.list_local() == ["latin-fasttext"]
        with pytest.raises(model_store.ModelUnavailable, match="'missing' is not in the models directory"):
            model_store.resolve("missing")
