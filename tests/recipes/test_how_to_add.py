"""docs/ARCHITECTURE.md, "How to add a detection method", followed step by step with a throwaway retriever: once
declared, it is in the registry, validated, listed by the API and by every command, and usable by the benchmark."""
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from detection.methods import ParamError, TopK, get_retriever, registry
from detection.methods.registry import MethodSpec, Param
from detection.methods.retriever import Retriever

NAME = "toy-shared-words"


# Step 1: the class, in a pure module (here the test module), Latin text through the one pipeline.
class SharedWordsRetriever(Retriever):
    """Score = number of distinct tokens a query shares with a source, kept when ≥ ``min_shared``."""

    def __init__(self, min_shared: int = 1, case: str = "fold"):
        self.min_shared, self.case = min_shared, case

    def fit(self, source_ids, source_texts, *, progress=None):
        from detection.latin.analysis import latin_tokens

        self.source_ids = self._check_fit(source_ids, source_texts)
        self.sets = [set(latin_tokens(t)) for t in source_texts]
        return self

    def search(self, query_texts, k, *, progress=None) -> TopK:
        from detection.latin.analysis import latin_tokens

        idx = np.full((len(query_texts), k), -1, np.int32)
        val = np.full((len(query_texts), k), np.nan, np.float32)
        for i, text in enumerate(query_texts):
            q = set(latin_tokens(text))
            scored = sorted(((-len(q & s), j) for j, s in enumerate(self.sets) if len(q & s) >= self.min_shared))[:k]
            for r, (neg, j) in enumerate(scored):
                idx[i, r], val[i, r] = j, -neg
        return TopK(idx, val, self.source_ids)


@pytest.fixture
def toy_method():
    # Step 2: declare it once (in real code: in its module, imported from detection/methods/catalog.py).
    registry.register(MethodSpec(
        NAME, "retriever", SharedWordsRetriever, "Toy: number of shared words (recipe test)", languages=("la",),
        params=(Param("min_shared", "int", 1, "fewest shared words", min=1, max=10),
                Param("case", "choice", "fold", "case handling", choices=("fold",)))))
    yield registry.get_spec(NAME)
    registry.unregister(NAME)


def test_step3_registry_validation_and_retrieval(toy_method):
    assert NAME in registry.names(kind="retriever", language="la") and toy_method.queue == "cpu"
    assert registry.validate(NAME, {"min_shared": "2"}) == {"min_shared": 2, "case": "fold"}
    for bad, message in (({"min_shared": 0}, "must be ≥ 1"), ({"min_shared": "two"}, "must be an integer"),
                         ({"model_path": "/tmp/x"}, "unknown parameter 'model_path'")):
        with pytest.raises(ParamError, match=message):
            registry.validate(NAME, bad)
    r = get_retriever(NAME, min_shared=2).fit(["s1", "s2"], ["arma uirumque cano", "tityre tu patulae"])
    assert r.search(["arma cano", "tityre"], 2).ids(0) == ["s1"]
    assert r.search(["tityre"], 2).ids(0) == []  # one shared word < min_shared


@pytest.mark.django_db
def test_step3_api_and_schema_list_it(toy_method, client_for):
    client = client_for("annotator")
    names = [m["name"] for m in client.get("/api/v1/methods/?kind=retriever").json()["results"]]
    assert NAME in names
    detail = client.get(f"/api/v1/methods/{NAME}/").json()
    assert detail["params"][0] == {"name": "min_shared", "type": "int", "default": 1, "help": "fewest shared words",
                                   "min": 1.0, "max": 10.0}


def test_step3_commands_list_it_and_check_its_params(toy_method, tmp_path):
    out = StringIO()
    call_command("detect", "--method", "list", stdout=out)
    assert NAME in out.getvalue() and "--param min_shared=" in out.getvalue()
    (tmp_path / "q.csv").write_text("seg_id,text\nq1,arma cano\n", encoding="utf-8")
    (tmp_path / "s.csv").write_text("seg_id,text\ns1,arma uirumque cano\ns2,tityre tu\n", encoding="utf-8")
    (tmp_path / "g.csv").write_text("query_id,source_id\nq1,s1\n", encoding="utf-8")
    argv = ["detect", "--query", str(tmp_path / "q.csv"), "--source", str(tmp_path / "s.csv"), "--output",
            str(tmp_path / "out.csv"), "--method", NAME]
    call_command(*argv, "--param", "min_shared=2", stderr=StringIO())
    assert (tmp_path / "out.csv").read_text().splitlines()[1].startswith("q1,s1,1,2")
    with pytest.raises(CommandError, match="parameter 'min_shared': must be ≤ 10"):
        call_command(*argv, "--param", "min_shared=11", stderr=StringIO())
    # the benchmark evaluates it by name
    call_command("evaluate_retrieval", "--queries", str(tmp_path / "q.csv"), "--sources", str(tmp_path / "s.csv"),
                 "--gold", str(tmp_path / "g.csv"), "--method", NAME, "--ks", "1", "--folds", "2",
                 "--output", str(tmp_path / "r.json"), stdout=StringIO())
    import json

    assert json.loads((tmp_path / "r.json").read_text())["recall@1"] == 1.0


def test_step2_a_gpu_method_is_routed_to_the_gpu_queue():
    spec = MethodSpec("toy-gpu", "reranker", SharedWordsRetriever, "toy", needs_gpu=True)
    assert spec.queue == "gpu" and spec.as_dict()["queue"] == "gpu"
