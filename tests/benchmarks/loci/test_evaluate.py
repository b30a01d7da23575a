"""End-to-end: evaluation driver, reports, CLI, plots (plus a full lexical run on the 545 pairs)."""
import json
import math

import numpy as np
import pytest

from benchmarks.loci import data, evaluate, loci_commands, method_adapters, plots, report, splits
from benchmarks.loci.data import Benchmark, GoldLink, Segment
from core.cli import CommandInputError

DATA = data.default_data_dir()
needs_data = pytest.mark.skipif(not (DATA / "pairs_545_with_text.csv").exists(), reason="shared data missing")


def _bench():
    qs = [Segment(f"q{i}", f"query {i}", "hier", "epist") for i in range(6)]
    ss = [Segment(f"s{j}", f"source {j}", "verg", "aen") for j in range(10)]
    gold = [GoldLink("q0", "s0", "cit."), GoldLink("q0", "s5", "cf."), GoldLink("q1", "s1", "cit."),
            GoldLink("q2", "s2", "cit."), GoldLink("q3", "s3", "cf."), GoldLink("q4", "s4", "cit."),
            GoldLink("q5", "s5", "cit.")]
    return Benchmark("toy", qs, ss, gold)


def _oracle(shift=0):
    """Ranks the gold sources of each query first (then by id), optionally shifted down by ``shift``."""
    gold = {(g.query_id, g.source_id) for g in _bench().gold}

    def fn(qids, qtexts, sids, stexts, k):
        idx = np.full((len(qids), k), -1, np.int32)
        sc = np.zeros((len(qids), k), np.float32)
        for i, q in enumerate(qids):
            order = sorted(range(len(sids)), key=lambda j: ((q, sids[j]) not in gold, sids[j]))
            order = order[len(order) - shift:] + order[:len(order) - shift] if shift else order
            order = order[:k]
            idx[i, :len(order)] = order
            sc[i, :len(order)] = np.linspace(1, 0, len(order))
        return idx, sc
    return fn


def test_synthetic_perfect_and_shifted_rankings():
    b = _bench()
    sp = splits.grouped_kfold(b, 3, seed=0)
    rep = evaluate.evaluate_retrieval(b, sp, method_adapters.RankingFunctionMethod("oracle", _oracle()), ks=(1, 2, 10),
                                      overlap=False)
    assert rep["recall@2"] == 1.0 and rep["mrr@1"] == 1.0
    assert rep["recall@1"] < 1.0  # q0 has two gold sources
    assert rep["by_type"]["cf."]["recall@10"] == 1.0
    json.dumps(rep)
    rep2 = evaluate.evaluate_retrieval(b, sp, method_adapters.RankingFunctionMethod("shift", _oracle(shift=1)),
                                       ks=(1, 2, 10), overlap=False)
    assert rep2["mrr@1"] == 0.0 and rep2["mrr@10"] == pytest.approx(
        np.mean([np.mean([1 / 2 if q != "q0" else 1 / 2 for q in qs]) for qs in
                 [[q for q, f in sp.query_fold.items() if f == ff] for ff in range(3)]]))
    assert {r["query_id"] for r in rep2["per_query"]} == {f"q{i}" for i in range(6)}
    assert all(r["rank"] for r in rep2["per_pair"])


class _MemorisingMethod:
    """Supervised toy: ranks first the sources its training links cite (so it can only help held-out queries
    through sources shared with other folds), and records what it was trained on."""

    name, params, supervised = "memorise", {}, True

    def __init__(self):
        self.trained_on = []

    def fit(self, source_ids, source_texts, train=None, progress=None):
        self.source_ids = list(source_ids)
        self.trained_on.append(set(train.query_ids))
        self.seen = {g.source_id for g in train.links}
        return self

    def search(self, query_ids, query_texts, k, progress=None):
        order = sorted(range(len(self.source_ids)), key=lambda j: (self.source_ids[j] not in self.seen, j))[:k]
        idx = np.tile(np.asarray(order, np.int32), (len(query_ids), 1))
        return idx, np.tile(np.linspace(1, 0, len(order)).astype(np.float32), (len(query_ids), 1))


def test_supervised_method_is_fitted_per_fold_on_the_other_folds_only():
    b = _bench()
    sp = splits.grouped_kfold(b, 3, seed=0)
    m = _MemorisingMethod()
    rep = evaluate.evaluate_retrieval(b, sp, m, ks=(1, 10), overlap=False)
    assert len(m.trained_on) == 3 and "fit_search_s" in rep["timing"]
    for f, trained in enumerate(m.trained_on):
        held_out = set(sp.fold_queries(f))
        assert trained and not (trained & held_out) and trained | held_out == {f"q{i}" for i in range(6)}
    assert rep["recall@10"] == 1.0 and len(rep["per_query"]) == 6


def test_pairwise_with_synthetic_scorer_tunes_on_other_folds():
    b = _bench()
    sp = splits.grouped_kfold(b, 3, seed=0)
    pools = splits.build_fold_pools(b, sp)
    gold = {(g.query_id, g.source_id): g.label for g in b.gold}

    class Scorer:
        name, params, supervised = "perfect", {}, False

        def score_grid(self, qids, qt, sids, st):
            out = np.zeros((len(qids), len(sids), 3))
            for i, q in enumerate(qids):
                for j, s in enumerate(sids):
                    lab = gold.get((q, s))
                    out[i, j] = [0, 0.9, 0.1] if lab == "cit." else [0, 0.1, 0.9] if lab == "cf." else [1, 0.05, 0.05]
            return out

    rep = evaluate.evaluate_pairwise(b, sp, pools, scorer=Scorer(),
                                     retriever=method_adapters.RankingFunctionMethod("oracle", _oracle()),
                                     sweep_ks=(1, 2, 5), overlap=False)
    assert rep["classification"]["all"]["mean"]["macro_gold"]["f1"]["mean"] == 1.0
    assert rep["error_rates"]["mean"]["global"]["smr"]["mean"] == 0.0
    assert sum(sum(r) for r in rep["confusion"]["total"]) == sum(p.n_pairs for p in pools)
    assert all(0.1 < t["cit."]["threshold"] <= 0.9 for t in rep["thresholds"])
    k2 = rep["sweep"]["all"][1]
    assert k2["rer"]["fp"]["mean"] == 0 and k2["ret"]["fn"]["mean"] == 0


@needs_data
def test_full_lexical_evaluation_on_545_pairs():
    """CI-sized: a full 5-fold evaluation of a lexical retriever on the 545 pairs (sources = the pairs' segments)."""
    b = data.load_default_545()
    sp = splits.split_from_file(b, "ref_type")
    rep = evaluate.evaluate_retrieval(b, sp, method_adapters.EngineRetrieverMethod("bm25-lemma"), ks=(1, 10, 100, 1000))
    assert rep["pool"] == {"kind": "gold", "n_sources": 408, "n_queries": 463, "depth": 408,
                           "gold_links_outside_pool": 0}
    assert 0.5 < rep["recall@10"] <= rep["recall@100"] <= rep["recall@1000"] <= 1.0
    assert rep["method"]["implementation"] == "detection.methods"
    assert rep["by_type"]["cit."]["recall@10"] > rep["by_type"]["cf."]["recall@10"]
    assert rep["metrics"]["all"]["recall@10"]["std"] is not None and len(rep["folds"]) == 5
    assert sum(f["n_queries"] for f in rep["folds"]) == 463
    assert rep["audit"]["n"] == 540 and rep["audit"]["share_ge2_lemmas"] > 0.5
    assert set(rep["strata"]["overlap_bucket"]) == {"bigram", "two_lemmas", "one_lemma", "none"}
    assert len(rep["per_pair"]) == 540
    json.dumps(rep)
    assert rep["timing"]["total_s"] < 60


def _write_files(tmp_path):
    b = data.load_default_545()
    import csv
    with open(tmp_path / "q.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["seg_id", "text"])
        w.writerows([[s.seg_id, s.text] for s in b.queries])
    with open(tmp_path / "s.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["seg_id", "text"])
        w.writerows([[s.seg_id, s.text] for s in b.sources])
    with open(tmp_path / "g.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["query_id", "source_id", "label"])
        w.writerows([[g.query_id, g.source_id, g.label] for g in b.raw_links])


@needs_data
def test_cli_evaluate_retrieval_on_files(tmp_path, capsys):
    _write_files(tmp_path)
    out = tmp_path / "report.json"
    assert loci_commands.main(["evaluate_retrieval", "--queries", str(tmp_path / "q.csv"), "--sources", str(tmp_path / "s.csv"),
                     "--gold", str(tmp_path / "g.csv"), "--method", "tfidf-surface", "--ks", "10,100",
                     "--output", str(out), "--csv", str(tmp_path / "pq.csv")]) == 0
    rep = json.loads(out.read_text())
    assert isinstance(rep["recall@10"], float) and isinstance(rep["mrr@100"], float)
    assert set(rep["by_type"]) == {"cit.", "cf."} and rep["split"]["name"].startswith("grouped")
    assert (tmp_path / "pq.csv").read_text().startswith("query_id,")
    assert "R@10=" in capsys.readouterr().out


@needs_data
def test_management_command_wrapper(tmp_path):
    pytest.importorskip("django")
    from benchmarks.management.commands.evaluate_retrieval import Command
    _write_files(tmp_path)
    cmd = Command()
    assert cmd.requires_system_checks == []
    parser = cmd.create_parser("manage.py", "evaluate_retrieval")
    opts = vars(parser.parse_args(["--queries", str(tmp_path / "q.csv"), "--sources", str(tmp_path / "s.csv"),
                                   "--gold", str(tmp_path / "g.csv"), "--method", "bm25-surface",
                                   "--param", "k1=1.2", "--ks", "10", "--output", str(tmp_path / "r.json")]))
    cmd.execute(**opts)
    rep = json.loads((tmp_path / "r.json").read_text())
    assert "recall@10" in rep and rep["method"]["params"] == {"k1": "1.2"}


def test_cli_rejects_unknown_gold_ids(tmp_path):
    (tmp_path / "q.csv").write_text("seg_id,text\nq1,arma\n")
    (tmp_path / "s.csv").write_text("seg_id,text\ns1,arma\n")
    (tmp_path / "g.csv").write_text("query_id,source_id\nq1,s404\n")
    with pytest.raises(CommandInputError, match="gold ids not in the corpora"):
        loci_commands.run_evaluate_retrieval(queries=tmp_path / "q.csv", sources=tmp_path / "s.csv", gold=tmp_path / "g.csv",
                                   method="bm25-lemma")
    with pytest.raises(CommandInputError, match="unknown parameter 'k2'"):
        loci_commands.run_evaluate_retrieval(queries=tmp_path / "q.csv", sources=tmp_path / "s.csv", gold=tmp_path / "g.csv",
                                   method="bm25-lemma", params={"k2": "1"})
    assert loci_commands.main(["evaluate_retrieval", "--method", "nope", "--queries", "q", "--sources", "s", "--gold", "g"]) == 2


def test_reports_and_plots():
    b = _bench()
    sp = splits.grouped_kfold(b, 3, seed=0)
    rep = evaluate.evaluate_retrieval(b, sp, method_adapters.RankingFunctionMethod("bm25-lemma", _oracle(1)),
                                      ks=(1, 10, 100, 1000), overlap=False)
    md = report.table8_markdown([rep])
    assert "BM25 (lem. 1g) (paper)" in md and "0.545" in md
    assert "cit. R@10" in report.table2_markdown([rep])
    svg = plots.recall_curve_svg([rep], views=("all", "cit.", "cf."))
    assert svg.startswith("<svg") and svg.count("<polyline") == 3
    pools = splits.build_fold_pools(b, sp)
    pair = evaluate.evaluate_pairwise(b, sp, pools, retriever=method_adapters.RankingFunctionMethod("o", _oracle()),
                                      sweep_ks=(1, 5, 10), overlap=False)
    assert "<polyline" in plots.prf_vs_k_svg(pair)
    assert report.table12_markdown(pair).count("\n") == 4
    assert report.leaderboard([rep])[0]["method"] == "bm25-lemma"
    assert not math.isnan(rep["recall@10"])


def test_benchmark_retriever_is_the_engine_and_has_no_fallback():
    """The benchmark's retriever gives exactly the registry retriever's rankings; a bad name or parameter is an
    error, never a switch to another implementation."""
    from detection.methods import ParamError, UnknownMethod, get_retriever
    src = ["arma uirumque cano", "tityre tu patulae", "arma arma arma", "nihil"]
    queries = ["tityre patulae", "uirumque cano"]
    for name in ("bm25-surface", "tfidf-surface", "bm25-lemma", "tfidf-lemma-12"):
        m = method_adapters.EngineRetrieverMethod(name).fit(["a", "b", "c", "d"], src)
        idx, sc = m.search(["q1", "q2"], queries, 3)
        ref = get_retriever(name).fit(["a", "b", "c", "d"], src).search(queries, 3)
        np.testing.assert_array_equal(idx, ref.indices)
        np.testing.assert_array_equal(sc, ref.scores)
        assert idx[0, 0] == 1 and idx[1, 0] == 0
    with pytest.raises(UnknownMethod):
        method_adapters.EngineRetrieverMethod("bm25-lemmaa")
    with pytest.raises(ParamError):
        method_adapters.EngineRetrieverMethod("bm25-lemma", k1="-1")
    import importlib.util
    assert importlib.util.find_spec("benchmarks.loci.engine") is None


@needs_data
def test_standard_runs_smoke(tmp_path):
    from benchmarks.loci import standard_runs
    assert standard_runs.main(["--out", str(tmp_path), "--method", "bm25-lemma", "--pools", "gold"]) == 0
    rep = json.loads((tmp_path / "bm25-lemma__gold.json").read_text())
    assert rep["pool"]["n_sources"] == 408
    rt = json.loads((tmp_path / "reftype.json").read_text())
    assert rt["both"]["n"] == 540 and 0.5 < rt["both"]["agreement"] <= 1
    aud = json.loads((tmp_path / "audit.json").read_text())
    assert aud["lemma"]["n"] == 540
    pair = json.loads((tmp_path / "pairwise.json").read_text())
    assert pair["table4"]["total"]["pos"] == 540 and "sweep" in pair
    assert "Table 8 shape" in (tmp_path / "summary.md").read_text()


def test_retrieval_options_object_and_keyword_overrides_agree():
    b = _bench()
    sp = splits.grouped_kfold(b, 3, seed=0)
    method = method_adapters.RankingFunctionMethod("oracle", _oracle(shift=1))
    by_object = evaluate.evaluate_retrieval(b, sp, method, evaluate.RetrievalOptions(ks=(1, 2), overlap=False))
    by_keywords = evaluate.evaluate_retrieval(b, sp, method, ks=(1, 2), overlap=False)
    for rep in (by_object, by_keywords):
        rep.pop("timing")
    assert by_object == by_keywords and by_object["ks"] == [1, 2] and "audit" not in by_object
    with pytest.raises(TypeError):
        evaluate.evaluate_retrieval(b, sp, method, kz=(1,))
