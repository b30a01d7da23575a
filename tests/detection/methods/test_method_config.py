"""One method configuration carried end to end (issue 27): `registry.configure` validates once and returns a
`MethodConfig` that a job carries as JSON (`to_json` / `from_json`, checked against its digest), and workers build
it through the registry with one `BuildContext` that fills every internal argument the method declares; a
composed method's part is built with the same context and handed over built."""
import json

import pytest

from detection.methods import registry
from detection.methods.registry import BuildContext, MethodConfig, ParamError


def test_the_configuration_travels_as_json_and_comes_back_equal():
    config = registry.configure("bm25-lemma", {"k1": "1.4"}, kind="retriever")
    carried = json.loads(json.dumps(config.to_json()))
    assert carried == {"name": "bm25-lemma", "kind": "retriever", "params": {"k1": 1.4, "b": 0.75, "stopwords": True},
                       "digest": config.digest}
    back = MethodConfig.from_json(carried)
    assert back == config and back.digest == config.digest


def test_a_configuration_edited_on_the_way_is_refused():
    carried = registry.configure("bm25-lemma", {}).to_json()
    carried["params"]["k1"] = 99.0  # beyond the declared range, slipped into a job's params
    with pytest.raises(ParamError, match="does not match its digest"):
        MethodConfig.from_json(carried)
    with pytest.raises(ParamError, match="name, kind, params and digest"):
        MethodConfig.from_json({"name": "bm25-lemma"})
    del carried["digest"]  # a digest taken away with the edit is no way round the check
    with pytest.raises(ParamError, match="name, kind, params and digest"):
        MethodConfig.from_json(carried)


def test_the_build_context_fills_only_what_a_method_declares(tmp_path):
    context = BuildContext(cache_dir=str(tmp_path), n_jobs=2)
    assert context.internal_for(registry.get_spec("bm25-lemma")) == {"cache_dir": str(tmp_path), "n_jobs": 2}
    assert context.internal_for(registry.get_spec("w2v-bigram")) == {"cache_dir": str(tmp_path), "workers": 2}
    assert context.internal_for(registry.get_spec("feature-logreg")) == {"cache_dir": str(tmp_path)}
    retriever = registry.build_config(registry.configure("bm25-lemma", {"k1": 1.1}), context)
    assert retriever.name == "bm25-lemma" and retriever.k1 == 1.1
    assert retriever.n_jobs == 2 and str(retriever.analyzer.cache_dir) == str(tmp_path)


def test_a_composed_method_gets_its_part_built_with_the_same_context(tmp_path):
    from .conftest import toy_vectors

    config = registry.configure("hybrid", {"lexical": "tfidf-lemma"})
    vectors = toy_vectors({"rex": [1.0, 0.0], "urbs": [0.0, 1.0]}, manifest={"unit": "surface"})
    hybrid = registry.build_config(config, BuildContext(cache_dir=str(tmp_path), n_jobs=3), vectors=vectors)
    assert hybrid.lexical.name == "tfidf-lemma" and hybrid.lexical.n_jobs == 3
    assert str(hybrid.lexical.analyzer.cache_dir) == str(tmp_path)


def test_a_stored_configuration_of_another_kind_or_an_undeclared_key_is_not_built():
    from .conftest import stored_config

    with pytest.raises(ParamError, match="is a retriever, not a reranker"):
        registry.build_config(stored_config("bm25-lemma", "reranker", {}))
    with pytest.raises(ParamError, match="no longer declared"):
        registry.build_config(stored_config("bm25-lemma", "retriever", {"k9": 1}))


def test_a_configuration_comes_only_from_the_registry():
    """No unvalidated configuration: built directly, or copied with other values, a MethodConfig is refused."""
    import dataclasses

    with pytest.raises(TypeError, match="registry.configure"):
        MethodConfig("bm25-lemma", "retriever", {"k1": 99.0})
    config = registry.configure("bm25-lemma", {}, kind="retriever")
    with pytest.raises(TypeError, match="registry.configure"):
        dataclasses.replace(config, params={"k1": 99.0})


def test_a_spec_declares_a_check_across_its_parameters():
    """`MethodSpec.checks`: a combination of values each valid on its own is refused by `configure`, with the same
    message wherever it comes from (the mechanism; hybrid's candidates=union + maxsim is the first user)."""
    from detection.methods.specs import MethodSpec, Param

    def union_needs_dense(params):
        if params["candidates"] == "union" and params["semantic"] == "maxsim":
            raise ParamError("candidates='union' needs a dense semantic score", "candidates")

    def low_below_high(params):
        if params["low"] > params["high"]:
            raise ParamError(f"low ({params['low']}) must not exceed high ({params['high']})", "low")

    spec = MethodSpec("toy-checked", "retriever", dict, "a toy with checks across parameters",
                      params=(Param("candidates", "choice", "lexical", choices=("lexical", "union")),
                              Param("semantic", "choice", "maxsim", choices=("maxsim", "sif")),
                              Param("low", "int", 1), Param("high", "int", 5)),
                      checks=(union_needs_dense, low_below_high))
    registry.register(spec)
    try:
        assert dict(registry.configure("toy-checked", {"candidates": "union", "semantic": "sif"}).params)[
            "candidates"] == "union"
        with pytest.raises(ParamError, match="needs a dense semantic score") as caught:
            registry.configure("toy-checked", {"candidates": "union"})
        assert caught.value.key == "candidates"
        with pytest.raises(ParamError, match=r"^low \(9\) must not exceed high \(5\)$"):
            registry.configure("toy-checked", {"low": 9})
    finally:
        registry.unregister("toy-checked")
