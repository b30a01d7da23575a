"""The learning-to-rank reranker on real Loci Similes candidates: trained on four folds, stored as JSON and loaded
back through the registry, scoring the fifth; its 3-class output and its leave-one-out model card."""
import json
import re

import numpy as np
import pytest

from benchmarks.suite import measures as MS
from benchmarks.suite import suite as S
from core.paths import shared_data_dir
from detection.methods import registry
from detection.methods.infrastructure import model_store
from detection.methods.rerank.ltr import PairwiseLinearRanker, pairwise_differences

needs_data = pytest.mark.skipif(not (shared_data_dir() / "lucan_vergil" / "all_lucan.txt").is_file(),
                                reason="shared data folder not here")


@pytest.fixture(scope="module")
def loci():
    return S.loci_benchmark()


def test_pairwise_differences_weigh_each_query_the_same():
    X = np.arange(12, dtype=float).reshape(6, 2)
    rel = np.array([1, 0, 0, 1, 1, 0], bool)
    groups = np.array([0, 0, 0, 1, 1, 1])
    D, w = pairwise_differences(X, rel, groups, np.array([1, 2, 3, 1, 2, 3]), max_negatives=5, seed=0)
    assert D.shape == (4, 2)  # query 0: 1 pos x 2 neg; query 1: 2 pos x 1 neg
    assert np.allclose(D[0], X[0] - X[1]) and np.allclose(D[2], X[3] - X[5])
    assert np.isclose(w[:2].sum(), 1.0) and np.isclose(w[2:].sum(), 1.0)


@needs_data
def test_trained_stored_loaded_and_used_like_any_reranker(loci, tmp_path):
    cache = {}
    cands = S.candidates(loci, "bm25-lemma", 50, cache)
    y = S.labels_of(loci, cands)
    held = {q for q in loci.query_ids if loci.folds[q] == 0}
    tr = S._rows_of(cands, set(loci.query_ids) - held)
    te = S._rows_of(cands, held)
    rr = registry.build("feature-ltr", {}).prepare(loci.source_texts)
    rr.fit(cands.subset(tr), y[tr])
    assert not (rr.training_queries & held)
    probs = rr.predict_proba(cands.subset(te))
    assert probs.shape == (len(te), 3) and np.allclose(probs.sum(axis=1), 1.0) and (probs >= 0).all()
    # P(reference) orders a query's candidates exactly as the ranking score does
    score = rr.clf.score(rr.features(cands.subset(te)), groups=cands.subset(te).qi)
    assert np.array_equal(np.argsort(-score, kind="stable"), np.argsort(probs[:, 0], kind="stable"))
    # it ranks the held-out fold better than the first stage (measured: see docs/benchmark_suite.md)
    rer = S._reranked(cands.subset(te), probs)
    first = {q: [s for s, _ in v] for q, v in S._as_ranked(loci, *S.retrieve(loci, "bm25-lemma", 50, cache)).items()
             if q in held}
    g = {q: loci.gold[q] for q in held}
    mrr_first = MS.mean(MS.per_query(first, g, ["RR@10"])["RR@10"])
    mrr_ltr = MS.mean(MS.per_query({q: [s for s, _ in v] for q, v in rer.items()}, g, ["RR@10"])["RR@10"])
    assert mrr_ltr > mrr_first
    # stored as JSON only, then loaded by name through the registry like today's rerankers
    files = rr.save(tmp_path / "ltr-test")
    assert sorted(files) == ["classifier.json", "featurizer.json", "reranker.json"]
    meta = json.loads((tmp_path / "ltr-test" / "classifier.json").read_text())
    assert meta["kind"] == "feature-ltr" and len(meta["w"]) == len(rr.featurizer.feature_names)
    with model_store.using(tmp_path):
        loaded = registry.build("feature-ltr", {"model": "ltr-test"})
    assert np.allclose(loaded.predict_proba(cands.subset(te)), probs, atol=1e-12)
    assert loaded.thresholds == rr.thresholds and loaded.training_queries == rr.training_queries


def test_a_corrupt_ranker_file_is_refused(tmp_path):
    (tmp_path / "classifier.json").write_text(json.dumps({"kind": "feature-ltr", "C": 1, "max_negatives": 5,
                                                          "mean": [0, 0], "scale": [1, 1], "w": [1],
                                                          "platt": [1, 0], "cf_prior": 0.1, "type_w": None,
                                                          "type_b": None}))
    with pytest.raises(ValueError, match="weight shapes do not match"):
        PairwiseLinearRanker.load(tmp_path)


@needs_data
def test_leave_one_benchmark_out_card_and_leak_count(loci):
    lucan = S.lucan_benchmark()
    small = S.SuiteBenchmark(loci.name, loci.query_ids[:60], loci.query_texts[:60], loci.source_ids,
                             loci.source_texts, {q: loci.gold[q] for q in loci.query_ids[:60]},
                             {q: loci.folds[q] for q in loci.query_ids[:60]}, loci.pool)
    res = S.rerank_transfer(lucan, [small], "bm25-lemma", "feature-ltr", 20, {})
    card = res.training
    assert card["mode"] == "leave-one-benchmark-out" and card["held_out"] == "lucan-vergil"
    assert card["trained_on"][0]["benchmark"] == "loci-similes" and card["trained_on"][0]["queries"] == 60
    assert card["leaked_queries"] == 0 and card["first_stage"] == "bm25-lemma"
    assert set(res.ranked) == set(lucan.query_ids)


@needs_data
def test_detect_lists_stored_rankers_and_warns_outside_what_a_ranker_learned(loci, tmp_path):
    import csv

    from detection.commands import detect_command, run_detect

    cache = {}
    cands = S.candidates(loci, "bm25-lemma", 30, cache)
    rr = registry.build("feature-ltr", {}).prepare(loci.source_texts)
    rr.fit(cands, S.labels_of(loci, cands))
    assert rr.first_stage == "bm25-lemma" and abs(sum(rr.label_distribution.values()) - 1) < 1e-9
    rr.save(tmp_path / "m" / "ltr-loci")
    q, s = tmp_path / "q.csv", tmp_path / "s.csv"
    for path, ids, texts in ((q, loci.query_ids[:15], loci.query_texts[:15]),
                             (s, loci.source_ids[:200], loci.source_texts[:200])):
        with open(path, "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["seg_id", "text"])
            w.writerows(zip(ids, texts))
    log = tmp_path / "log.txt"
    with model_store.using(tmp_path / "m"), open(log, "w", encoding="utf-8") as stream:
        run_detect(query=str(q), source=str(s), output=str(tmp_path / "out.csv"), method="tfidf-surface", top_k=10,
                   cache_dir=tmp_path / "cache", reranker="feature-ltr", reranker_params={"model": "ltr-loci"},
                   stream=stream)
        import io

        listing = io.StringIO()
        detect_command({"method": "list"}, stdout=listing, stderr=listing)
    text = log.read_text(encoding="utf-8")
    assert re.search(r"reranked \d+ candidates with feature-ltr in \d+\.\d s", text)
    assert "warning: feature-ltr learned to rerank bm25-lemma's candidates, not tfidf-surface's" in text
    out = listing.getvalue()
    assert "feature-ltr" in out and "bm25-lemma" in out
    assert f"ltr-loci: feature-ltr, first stage bm25-lemma, {len(loci.query_ids)} training queries" in out


def test_a_label_distribution_far_from_training_is_said():
    from detection.methods.rerank import pipeline as P
    from detection.methods.rerank.rerankers import use_warnings

    rr = registry.build("feature-ltr", {})
    rr.label_distribution = {"none": 0.9, "cit.": 0.08, "cf.": 0.02}
    cands = P.from_topk(["q"], ["a"], ["s1", "s2", "s3", "s4"], ["b"] * 4, np.array([[0, 1, 2, 3]]),
                        np.array([[4.0, 3, 2, 1]]))
    far = P.Reranked(cands, np.zeros((4, 3)), np.array([2, 2, 2, 0], np.int8), {})
    (w,) = use_warnings(rr, far)
    assert "labels these 4 candidates none 25%, cit. 0%, cf. 75%" in w and "distance 0.73" in w
    near = P.Reranked(cands, np.zeros((4, 3)), np.array([0, 0, 0, 0], np.int8), {})
    assert use_warnings(rr, near) == ["feature-ltr labels none of the 4 candidates as a reference"]


# ------------------------------------------------------------------ over the channels (issue 25, third round)
@pytest.fixture(scope="module")
def loci_small(loci):
    qs = loci.query_ids[:120]
    return S.SuiteBenchmark(loci.name, qs, loci.query_texts[:120], loci.source_ids, loci.source_texts,
                            {q: loci.gold[q] for q in qs}, {q: loci.folds[q] for q in qs}, loci.pool)


@needs_data
def test_channels_candidates_carry_each_channels_score_and_a_ranker_learns_from_them(loci_small, tmp_path):
    cache = {}
    cands = S.candidates(loci_small, "channels", 30, cache)
    assert cands.extra_names == S.CHANNEL_SIGNALS and cands.extra.shape == (len(cands), len(S.CHANNEL_SIGNALS))
    assert cands.meta == {"retriever": "channels", "retriever_params": {"profile": "prose"}}
    # the fused score is the weighted sum of the channels' scores (prose: no position channel, no context)
    from detection.channels.pairwise import PROFILES

    w = np.asarray([PROFILES["prose"].get(n.removeprefix("channel_"), 0.0) for n in S.CHANNEL_SIGNALS])
    assert np.allclose(cands.extra @ w, cands.score, rtol=1e-4, atol=1e-4)
    assert not cands.extra[:, S.CHANNEL_SIGNALS.index("channel_position")].any()
    y = S.labels_of(loci_small, cands)
    rr = registry.build("feature-ltr", {"anchor": True}).prepare(loci_small.source_texts)
    rr.fit(cands, y)
    assert rr.feature_names[-len(S.CHANNEL_SIGNALS):] == list(S.CHANNEL_SIGNALS)
    assert len(rr.clf.w_) == len(rr.feature_names) and rr.first_stage_config == {"profile": "prose"}
    files = rr.save(tmp_path / "ltr-ch")
    card = json.loads((tmp_path / "ltr-ch" / "reranker.json").read_text())
    assert card["first_stage"] == "channels" and card["first_stage_config"] == {"profile": "prose"}
    assert card["first_stage_features"] == list(S.CHANNEL_SIGNALS) and "classifier.json" in files
    with model_store.using(tmp_path):
        loaded = registry.build("feature-ltr", {"model": "ltr-ch"})
    assert np.allclose(loaded.predict_proba(cands), rr.predict_proba(cands), atol=1e-12)
    # candidates of a first stage without those signals are refused, the missing signals named
    bm25 = S.candidates(loci_small, "bm25-lemma", 30, cache)
    with pytest.raises(ValueError, match=r"learned from the first stage.s channel_lemma, .* candidates \(bm25-lemma\) do not carry"):
        loaded.predict_proba(bm25)
    # a model that does not use them (first_stage_features=false) has only the 20 pair features
    plain = registry.build("feature-ltr", {"first_stage_features": False}).prepare(loci_small.source_texts)
    plain.fit(cands, y)
    assert plain.feature_names == plain.featurizer.feature_names and len(plain.clf.w_) == 20


@needs_data
def test_an_anchored_ranker_with_a_strong_penalty_is_the_first_stage(loci_small):
    cands = S.candidates(loci_small, "channels", 30, {})
    y = S.labels_of(loci_small, cands)
    strong = registry.build("feature-ltr", {"anchor": True, "C": 1e-4}).prepare(loci_small.source_texts)
    strong.C = 1e-9  # below the parameter's range: the penalty wins outright
    strong.fit(cands, y)
    a = strong.feature_names.index("retrieval_score")
    others = np.delete(strong.clf.w_, a)
    assert strong.clf.w_[a] > 0 and np.abs(others).max() < 1e-6 * strong.clf.w_[a]
    # so each query's order is the channels' order (the anchor alone) where the fused scores differ
    rer = S._reranked(cands, strong.predict_proba(cands))
    first = S._as_ranked(loci_small, *S.retrieve(loci_small, "channels", 30, {}))
    same = sum(1 for q in rer if [s for s, _ in rer[q][:10]] == [s for s, _ in first[q][:10]])
    assert same == len(rer)
    weak = registry.build("feature-ltr", {"anchor": True, "C": 1.0}).prepare(loci_small.source_texts)
    weak.fit(cands, y)
    assert np.abs(np.delete(weak.clf.w_, a)).max() > 10 * np.abs(others).max()


@needs_data
def test_verse_queries_are_searched_with_their_true_neighbouring_lines():
    lucan = S.lucan_benchmark()
    assert lucan.text_type == "verse" and S.first_stage_params(lucan, "channels") == {"profile": "verse"}
    assert S.first_stage_params(lucan, "bm25-lemma") == {}
    texts, rows = S._neighbour_runs(lucan)
    assert len(rows) == len(lucan.query_ids) and len(texts) < len(lucan.lines)
    for r, i in zip(rows, lucan.line_index):
        assert texts[r] == lucan.lines[i]
        before = texts[r - 1] if r > 0 else ""
        assert before in ("", lucan.lines[i - 1]) and (before == "" or i > 0)
        after = texts[r + 1] if r + 1 < len(texts) else ""
        assert after == "" or after == lucan.lines[i + 1]
    assert "" in texts  # runs of lines apart are separated by an empty text


def test_a_method_list_keeps_the_commas_of_a_rerankers_parameters():
    assert S.split_methods("bm25-lemma, channels>feature-ltr(anchor=true,C=0.01)@lobo,rrf:a+b,") == [
        "bm25-lemma", "channels>feature-ltr(anchor=true,C=0.01)@lobo", "rrf:a+b"]
    first, name, params, lobo = S.parse_reranked("channels>feature-ltr(anchor=true,C=0.01)@lobo")
    assert (first, name, params, lobo) == ("channels", "feature-ltr", {"anchor": "true", "C": "0.01"}, True)


@needs_data
def test_a_reranked_row_is_compared_with_every_unsupervised_row(loci_small):
    rep = S.run_suite(["bm25-lemma", "tfidf-surface", "bm25-lemma>feature-ltr"], {"loci-similes": loci_small},
                      depth=100, rerank_depth=20, n_resamples=200)
    rows = rep["rows"]["loci-similes"]
    vs = rows["bm25-lemma>feature-ltr"]["vs"]
    assert set(vs) == {"tfidf-surface"} and set(vs["tfidf-surface"]) == {"RR@10", "R@10"}
    c = vs["tfidf-surface"]["RR@10"]
    assert c["n_queries"] == len(loci_small.query_ids)
    assert abs(c["delta"] - (rows["bm25-lemma>feature-ltr"]["mean"]["RR@10"] - rows["tfidf-surface"]["mean"]["RR@10"])) < 1e-12
    assert "vs" not in rows["tfidf-surface"]  # the unsupervised rows keep their one comparison with the first


@needs_data
def test_a_carried_reranked_row_runs_as_its_string_does(loci_small):
    """A suite job's row read back from its configurations (``SuiteMethod.from_json``) scores as the string does,
    under the string's row name; the reranker is built from the carried configuration (its text parameters were
    typed once, when configured)."""
    spec = "bm25-lemma>feature-logreg(C=0.5)"
    carried = S.SuiteMethod.from_json(S.configure_method(spec).to_json())
    assert carried.reranker.params["C"] == 0.5 and carried.mode == "rerank" and not carried.lobo
    kw = dict(depth=100, rerank_depth=20, n_resamples=200)
    by_string = S.run_suite(["bm25-lemma", spec], {"loci-similes": loci_small}, **kw)["rows"]["loci-similes"]
    rep = S.run_suite([S.configure_method("bm25-lemma"), carried], {"loci-similes": loci_small}, **kw)
    assert rep["methods"] == ["bm25-lemma", spec]
    rows = rep["rows"]["loci-similes"]
    for m in ("bm25-lemma", spec):
        assert rows[m]["mean"] == by_string[m]["mean"] and rows[m]["per_query"] == by_string[m]["per_query"]
    assert rows[spec]["training"]["mode"] == "within" and rows[spec]["training"]["leaked_queries"] == 0


# ------------------------------------------------------------------ transfer options (issue 25, fourth round)
@needs_data
def test_a_monotone_ranker_never_weighs_a_channel_against_a_candidate(loci_small, tmp_path):
    cands = S.candidates(loci_small, "channels", 30, {})
    y = S.labels_of(loci_small, cands)
    free = registry.build("feature-ltr", {"anchor": True, "C": 1.0}).prepare(loci_small.source_texts)
    free.fit(cands, y)
    names = free.feature_names
    up = [names.index(n) for n in ("retrieval_score", "retrieval_score_rel", "retrieval_rank_inv",
                                   *S.CHANNEL_SIGNALS)]
    assert (free.clf.w_[up] < -1e-6).any()  # unconstrained, some channel weighs against its candidates here
    mono = registry.build("feature-ltr", {"anchor": True, "C": 1.0, "monotone": True}).prepare(
        loci_small.source_texts)
    mono.fit(cands, y)
    signs = mono.monotone_signs()
    assert [signs[i] for i in up] == [1] * len(up) and signs[names.index("retrieval_log_rank")] == -1
    assert signs[names.index("tfidf_lemma_1")] == 0
    w = mono.clf.w_
    assert (w[up] >= 0).all() and w[names.index("retrieval_log_rank")] <= 0
    assert (w[[i for i, s in enumerate(signs) if s == 0]] != 0).any()  # the pair features stay free
    # so raising one candidate's channel score never lowers its ranking score (the features are per-query z-scores)
    X = mono.features(cands)
    q0 = np.flatnonzero(cands.qi == cands.qi[0])
    base = mono.clf.score(X[q0], groups=cands.qi[q0])
    for col in (names.index("channel_rare"), names.index("channel_sound")):
        bumped = X[q0].copy()
        bumped[0, col] += 5.0
        assert mono.clf.score(bumped, groups=cands.qi[q0])[0] >= base[0] - 1e-9
    # stored with its constraint and loaded back as JSON
    mono.save(tmp_path / "ltr-mono")
    with model_store.using(tmp_path):
        loaded = registry.build("feature-ltr", {"model": "ltr-mono"})
    assert loaded.clf.signs == signs
    assert np.allclose(loaded.predict_proba(cands), mono.predict_proba(cands), atol=1e-12)


@needs_data
def test_training_pairs_stop_at_the_depth_asked(loci_small):
    cands = S.candidates(loci_small, "channels", 30, {})
    y = S.labels_of(loci_small, cands)
    rel, rank = y > 0, np.asarray(cands.rank)
    X = np.column_stack([cands.score, rank]).astype(float)
    D_all, _ = pairwise_differences(X, rel, cands.qi, rank, max_negatives=1000, seed=0)
    D5, w5 = pairwise_differences(X, rel, cands.qi, rank, max_negatives=1000, seed=0, depth=5)
    # every pair is (positive within rank 5) - (negative within rank 5): the rank column's difference stays within 4
    assert len(D5) < len(D_all) and np.abs(D5[:, 1]).max() <= 4
    expect = sum(int(rel[(cands.qi == q) & (rank <= 5)].sum() * (~rel[(cands.qi == q) & (rank <= 5)]).sum())
                 for q in np.unique(cands.qi))
    assert len(D5) == expect
    n_queries = sum(1 for q in np.unique(cands.qi) if rel[(cands.qi == q) & (rank <= 5)].any()
                    and (~rel[(cands.qi == q) & (rank <= 5)]).any())
    assert np.isclose(w5.sum(), n_queries)
    rr = registry.build("feature-ltr", {"anchor": True, "train_depth": 5}).prepare(loci_small.source_texts)
    rr.fit(cands, y)
    assert rr.clf.train_depth == 5 and len(rr.clf.w_) == len(rr.feature_names)
    # a depth at which no query has both a positive and a negative is refused with the depth named
    with pytest.raises(ValueError, match="within first-stage rank 1"):
        PairwiseLinearRanker(train_depth=1).fit(X, y, groups=cands.qi, order=rank)


# ------------------------------------------- a fixed first stage (issue 25: clean leave-one-benchmark-out)
def test_a_first_stage_takes_declared_parameters_validated_by_the_registry():
    spec = "channels(profile=prose)>feature-ltr(anchor=true,C=0.001)@lobo"
    m = S.configure_method(spec)
    assert m.first == "channels(profile=prose)" and m.firsts[0].name == "channels"
    assert m.firsts[0].params["profile"] == "prose" and m.reranker.params["C"] == 0.001 and m.lobo
    carried = S.SuiteMethod.from_json(m.to_json())  # a suite job's row runs the same fixed first stage
    assert carried.first == "channels(profile=prose)" and carried.firsts[0].params["profile"] == "prose"
    assert S.configure_method("rrf:channels(profile=verse)+bm25-lemma").first_stages == (
        "channels(profile=verse)", "bm25-lemma")
    assert S.split_first(" channels( profile = prose ,budget=50) ") == ("channels", {"profile": "prose",
                                                                                    "budget": "50"})
    verse = S.SuiteBenchmark("v", [], [], [], [], {}, {}, text_type="verse")
    assert S.first_stage_params(verse, "channels") == {"profile": "verse"}  # the text type, when not given
    assert S.first_stage_params(verse, "channels(profile=prose)") == {"profile": "prose"}
    assert S.first_stage_params(verse, "bm25-lemma(k1=1.2)") == {"k1": "1.2"}


@pytest.mark.parametrize("spec, says", [
    ("channels(profile=poetry)", "parameter 'profile': must be one of verse, prose, not 'poetry'"),
    ("channels(profil=prose)>feature-ltr@lobo", "unknown parameter 'profil' for method 'channels'"),
    ("channels(budget=0)", "parameter 'budget': must be ≥ 1, not 0"),
    ("bm25-lemma(profile=prose)", "unknown parameter 'profile' for method 'bm25-lemma'"),
    ("channels(profile)>feature-ltr", "first stage parameter 'profile' is not key=value"),
    ("channels(profile=prose", "first stage 'channels(profile=prose': write NAME or NAME(key=value,...)"),
])
def test_a_bad_first_stage_parameter_is_refused_naming_the_method_and_the_parameter(spec, says):
    from benchmarks.suite.suite_commands import configure_methods
    from core.cli import CommandInputError

    with pytest.raises(CommandInputError) as exc:
        configure_methods([spec])
    assert str(exc.value).startswith(f"method {spec!r}: ") and says in str(exc.value)


@needs_data
def test_a_fixed_profile_runs_on_every_benchmark_and_the_card_says_which(loci_small):
    cache = {}
    fixed = S.candidates(loci_small, "channels(profile=verse)", 20, cache)
    shipped = S.candidates(loci_small, "channels", 20, cache)  # Loci Similes is prose: the prose profile
    assert fixed.meta == {"retriever": "channels", "retriever_params": {"profile": "verse"}}
    assert shipped.meta["retriever_params"] == {"profile": "prose"}
    assert len({k for k in cache if k[0] == loci_small.name}) == 2
    assert not np.array_equal(fixed.score, shipped.score)  # position and the verse weights score differently
    assert S.candidates(loci_small, "channels(profile=prose)", 20, cache).score.tolist() == shipped.score.tolist()
    assert len(cache) == 2  # the text type's profile written out is the same first stage (one cached search)
    rr, card = S.train_on([loci_small], "channels(profile=verse)", "feature-ltr", 20, cache,
                          {"anchor": True, "C": 0.001})
    assert rr.first_stage == "channels" and card["trained_on"][0]["first_stage_config"] == {"profile": "verse"}
    assert rr.first_stage_config == {loci_small.name: {"profile": "verse"}}


def test_a_carried_row_whose_string_and_configuration_disagree_on_a_first_stage_parameter_is_refused():
    data = S.configure_method("channels(profile=prose)>feature-ltr(anchor=true,C=0.001)@lobo").to_json()
    data["display"] = "channels(profile=verse)>feature-ltr(anchor=true,C=0.001)@lobo"  # the config says prose
    with pytest.raises(registry.ParamError, match="does not name the configurations it carries: queue the job"):
        S.SuiteMethod.from_json(data)
    data["display"] = "channels(budget=x)>feature-ltr(anchor=true,C=0.001)@lobo"
    with pytest.raises(registry.ParamError, match="does not name the configurations it carries"):
        S.SuiteMethod.from_json(data)
