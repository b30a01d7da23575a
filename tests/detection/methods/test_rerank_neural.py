"""Neural second stage on tiny models built here (2-layer BERT, WordPiece trained with `tokenizers`): the 3-class
cross-encoder (sampler, half budget, checkpoints, resume, bad inputs) and bi-encoder fine-tuning (both losses)."""
import numpy as np
import pytest

from benchmarks.loci import data
from detection.methods.rerank import bi_encoder as BE
from detection.methods.rerank import cross_encoder as CE
from detection.methods.rerank.neural import TrainingFailed
from detection.methods.rerank.tiny import build_tiny_bert


@pytest.fixture(scope="module")
def bench():
    return data.load_default_545()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, bench):
    return build_tiny_bert(tmp_path_factory.mktemp("tiny") / "bert", [s.text for s in bench.queries + bench.sources],
                           hidden=16)


@pytest.fixture(scope="module")
def pairs(bench):
    q = {s.seg_id: s.text for s in bench.queries}
    s = {x.seg_id: x.text for x in bench.sources}
    sources = list(s.values())
    Q, C, Y = [], [], []
    for n, g in enumerate(bench.gold[:40]):
        Q += [q[g.query_id]] * 3
        C += [s[g.source_id], sources[(n * 7) % len(sources)], sources[(n * 13 + 1) % len(sources)]]
        Y += [1 if g.label == "cit." else 2, 0, 0]
    return Q, C, np.asarray(Y)


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """One intra-op thread: on a machine whose cores are busy with other work, torch's default pool made the tiny
    models here 2–5× slower (measured: 116 vs 580 pairs/s for the cross-encoder, 200 vs 780 texts/s for the
    bi-encoder). The results do not depend on it."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_sampler_weights_give_the_target_exposure_and_absent_classes_share_theirs():
    y = np.array([0] * 90 + [1] * 9 + [2] * 1)
    w = CE.sample_weights(y, (0.8, 0.1, 0.1))
    assert [w[y == c].sum() / w.sum() for c in range(3)] == pytest.approx([0.8, 0.1, 0.1])
    w = CE.sample_weights(np.array([0, 0, 1]), (0.8, 0.1, 0.1))
    assert w[2] / w.sum() == pytest.approx(0.1 / 0.9)
    assert CE.parse_class_probs("natural") is None
    with pytest.raises(ValueError):
        CE.parse_class_probs("1,2")


def test_each_side_gets_half_the_token_budget(tiny):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny))
    long = "arma uirumque cano troiae qui primus ab oris " * 20
    enc = CE.encode_pairs(tok, [long, "arma"], [long, long], 32)
    first = enc["input_ids"][0].tolist()
    sep = tok.sep_token_id
    a_len = first.index(sep) - 1
    b_len = len(first) - first.index(sep) - 2
    assert len(first) <= 32 and a_len == b_len == (32 - 3) // 2
    second = enc["input_ids"][1].tolist()
    n_arma = len(tok("arma", add_special_tokens=False)["input_ids"])
    assert second.index(sep) == n_arma + 1  # a short query keeps its length; the candidate is still cut at its half
    assert sum(1 for t in second if t != tok.pad_token_id) == 3 + n_arma + (32 - 3) // 2


def test_cross_encoder_trains_checkpoints_resumes_and_scores(tiny, pairs, tmp_path):
    Q, C, Y = pairs
    logs, prog = [], []
    out = tmp_path / "ce"
    first = CE.train(base_model=str(tiny), queries=Q, candidates=C, labels=Y, out_dir=out,
                     options=CE.CrossEncoderOptions(epochs=2, batch_size=8, effective_batch=16, max_length=48,
                                                    max_steps=8), log=logs.append,
                     progress=lambda f, m: prog.append(m))
    assert first["epochs"] == 1 and first["steps"] == 8 and first["accumulation"] == 2
    assert (out / "checkpoint-last" / "state.json").is_file() and "pairs/s" in prog[-1] and "loss" in prog[-1]
    assert any("class exposure" in line for line in logs) and any("CPU" in line for line in logs)
    second = CE.train(base_model=str(tiny), queries=Q, candidates=C, labels=Y, out_dir=out,
                      options=CE.CrossEncoderOptions(epochs=2, batch_size=8, effective_batch=16, max_length=48),
                      log=logs.append)
    assert "resuming from the checkpoint of epoch 1" in logs and second["epochs"] == 2 and second["steps"] == 16
    tok, model, card = CE.load(out)
    assert card["kind"] == "cross-encoder" and card["versions"]["torch"]
    p = CE.predict_proba(tok, model, Q[:6], C[:6], max_length=48, batch_size=4)
    assert p.shape == (6, 3) and np.allclose(p.sum(1), 1, atol=1e-5)
    # the next batch is tokenised in a second thread: any batch size gives each pair the probabilities it gets alone
    one_by_one = np.vstack([CE.predict_proba(tok, model, [q], [c], max_length=48, batch_size=1)
                            for q, c in zip(Q[:6], C[:6])])
    assert np.allclose(CE.predict_proba(tok, model, Q[:6], C[:6], max_length=48, batch_size=6), one_by_one, atol=1e-5)
    assert np.allclose(p, one_by_one, atol=1e-5)


def test_cross_encoder_bad_inputs_fail_clearly(tiny, pairs, tmp_path):
    import shutil

    Q, C, Y = pairs
    with pytest.raises(ValueError, match="no positive"):
        CE.train(base_model=str(tiny), queries=Q, candidates=C, labels=np.zeros_like(Y), out_dir=tmp_path / "a")
    bad = tmp_path / "corrupt"
    (bad / "checkpoint-last").mkdir(parents=True)
    (bad / "checkpoint-last" / "state.json").write_text("{not json")
    with pytest.raises(TrainingFailed, match="corrupt checkpoint"):
        CE.train(base_model=str(tiny), queries=Q, candidates=C, labels=Y, out_dir=bad)
    small = tmp_path / "small"
    shutil.copytree(tiny, small)
    import json

    conf = json.loads((tiny / "config.json").read_text())
    conf["vocab_size"] = 50
    (small / "config.json").write_text(json.dumps(conf))
    with pytest.raises(TrainingFailed, match="mismatch|cannot load"):
        CE.train(base_model=str(small), queries=Q, candidates=C, labels=Y, out_dir=tmp_path / "b",
                 options=CE.CrossEncoderOptions(max_steps=1))
    BE_dir = tmp_path / "be"
    BE_dir.mkdir()
    (BE_dir / "similia.json").write_text('{"kind": "bi-encoder"}')
    with pytest.raises(TrainingFailed, match="not a cross-encoder"):
        CE.load(BE_dir)


@pytest.mark.parametrize("loss,negatives", [("online-contrastive", "query-random"), ("mnrl", "hard-bm25"),
                                            ("online-contrastive", "mixed")])
def test_bi_encoder_fine_tunes_with_both_losses_and_every_kind_of_negative(tiny, bench, tmp_path, loss, negatives):
    q = {s.seg_id: s.text for s in bench.queries}
    sources = [s.text for s in bench.sources]
    idx = {s.seg_id: i for i, s in enumerate(bench.sources)}
    positives = [(q[g.query_id], idx[g.source_id]) for g in bench.gold[:24]]
    ex = BE.build_examples(positives, sources, negatives=negatives, neg_ratio=2, loss=loss, base_dir=str(tiny))
    assert len(ex) == (72 if loss == "online-contrastive" else 48)
    if loss == "online-contrastive":
        assert sum(e[2] for e in ex) == 24
    gold_texts = {(qt, sources[j]) for qt, j in positives}
    if negatives != "random":
        negs = [(e[0], e[1]) for e in ex if e[2] == 0.0] if loss == "online-contrastive" else [(e[0], e[2]) for e in ex]
        assert not any(n in gold_texts for n in negs)
    summary = BE.train(base_model=str(tiny), examples=ex, out_dir=tmp_path / "be",
                       options=BE.BiEncoderOptions(loss=loss, epochs=1, batch_size=16, max_steps=3))
    assert summary["steps"] == 3 and np.isfinite(summary["final_loss"])
    emb = BE.encode(BE.load(tmp_path / "be"), ["arma uirumque cano"], prefix=BE.QUERY_PREFIX)
    assert emb.shape[0] == 1 and np.linalg.norm(emb) == pytest.approx(1, abs=1e-4)
    with pytest.raises(ValueError, match="neg_ratio"):
        BE.build_examples(positives, sources, negatives=negatives, neg_ratio=11, loss=loss)


def _train_tiny_bi_encoder(tiny, bench, out, query_ids, steps=2):
    q = {s.seg_id: s.text for s in bench.queries}
    idx = {s.seg_id: i for i, s in enumerate(bench.sources)}
    gold = [g for g in bench.gold if g.query_id in query_ids][:24]
    ex = BE.build_examples([(q[g.query_id], idx[g.source_id]) for g in gold], [s.text for s in bench.sources],
                           negatives="query-random", neg_ratio=1, loss="online-contrastive")
    return BE.train(base_model=str(tiny), examples=ex, out_dir=out,
                    options=BE.BiEncoderOptions(epochs=1, batch_size=8, max_steps=steps), card={"training_queries": sorted({g.query_id for g in gold})})


def test_a_fine_tuned_bi_encoder_is_a_first_stage_retriever_by_its_registered_name(tiny, bench, models_dir):
    from detection.methods import registry
    from detection.methods.semantic.encoders import EncoderError

    summary = _train_tiny_bi_encoder(tiny, bench, models_dir / "be-tiny" / "fold-0",
                                     {g.query_id for g in bench.gold})
    assert summary["steps"] == 2
    sources = [s.text for s in bench.sources[:60]]
    ids = [s.seg_id for s in bench.sources[:60]]
    queries = [s.text for s in bench.queries[:5]]
    r = registry.build("dense-encoder", {"model": "be-tiny/fold-0", "device": "cpu"})
    r.fit(ids, sources)
    top = r.search(queries, 5)
    # the trained model, with the prefixes it was trained with
    assert r.describe()["query_prefix"] == BE.QUERY_PREFIX and r.passage_prefix == BE.CANDIDATE_PREFIX
    model = BE.load(models_dir / "be-tiny" / "fold-0")
    qe = BE.encode(model, queries, prefix=BE.QUERY_PREFIX)
    se = BE.encode(model, sources, prefix=BE.CANDIDATE_PREFIX)
    want = np.argsort(-(qe @ se.T), axis=1, kind="stable")[:, :5]
    assert top.indices[:, 0].tolist() == want[:, 0].tolist()
    np.testing.assert_allclose(top.scores, np.take_along_axis(qe @ se.T, top.indices.astype(int), 1), atol=1e-4)
    # an explicit prefix still wins; the per-fold folder alone and a cross-encoder are refused, naming why
    assert registry.build("dense-encoder", {"model": "be-tiny/fold-0", "query_prefix": ""}).query_prefix == ""
    with pytest.raises(EncoderError, match="one bi-encoder per fold: name one \\(be-tiny/fold-0\\)"):
        registry.build("dense-encoder", {"model": "be-tiny", "device": "cpu"}).fit(ids, sources)
    (models_dir / "ce").mkdir()
    (models_dir / "ce" / "similia.json").write_text('{"kind": "cross-encoder"}')
    with pytest.raises(EncoderError, match="is a cross-encoder, not a bi-encoder"):
        registry.build("dense-encoder", {"model": "ce", "device": "cpu"}).fit(ids, sources)


@pytest.fixture(scope="module")
def be5(tiny, bench, tmp_path_factory):
    """A tiny bi-encoder per fold (trained once for this module): fold 0's fine-tuned on its training folds' queries,
    the others copies of it whose cards carry their own training folds' queries (what ``dense-encoder`` checks)."""
    import shutil

    from benchmarks.loci import splits

    split = splits.split_from_file(bench, "ref_type")
    folder = tmp_path_factory.mktemp("be5") / "be5"
    _train_tiny_bi_encoder(tiny, bench, folder / "fold-0", {q for q, f in split.query_fold.items() if f != 0})
    for f in range(1, split.n_folds):
        shutil.copytree(folder / "fold-0", folder / f"fold-{f}")
        card = BE.neural.read_card(folder / f"fold-{f}")
        train_q = {q for q, g in split.query_fold.items() if g != f}
        BE.neural.write_card(folder / f"fold-{f}", {**card, "training_queries": sorted(
            {g.query_id for g in bench.gold if g.query_id in train_q})[:24]})
    return folder


def _install(folder, models_dir):
    import shutil

    shutil.copytree(folder, models_dir / folder.name)


def test_a_bi_encoder_stored_per_fold_is_evaluated_with_each_folds_model_and_never_a_leaking_one(be5, bench,
                                                                                                models_dir):
    from benchmarks.loci import method_adapters, splits
    from benchmarks.loci.evaluate import evaluate_retrieval
    from detection.methods.semantic.encoders import EncoderError

    split = splits.split_from_file(bench, "ref_type")
    _install(be5, models_dir)
    m = method_adapters.EngineRetrieverMethod("dense-encoder", model="be5", device="cpu")
    assert m.supervised
    picked = []
    use_fold = m._r.use_fold
    m._r.use_fold = lambda fold, qs: picked.append(fold) or use_fold(fold, qs)
    rep = evaluate_retrieval(bench, split, m, ks=(1, 10), pool="gold", per_query=False, overlap=False)
    assert picked == [0, 1, 2, 3, 4] and m.describe()["retriever"]["model"] == "be5/fold-4"
    assert 0 <= rep["mrr@10"] <= 1
    # the pairwise section of a run fits the retriever once per fold pool: each with that fold's model too
    from benchmarks.loci.evaluate import evaluate_pairwise

    evaluate_pairwise(bench, split, splits.build_fold_pools(bench, split, seed=0), retriever=m, overlap=False)
    assert picked == [0, 1, 2, 3, 4] * 2
    # a fold model that saw one of its held-out queries is refused
    held = split.fold_queries(2)[0]
    card = BE.neural.read_card(models_dir / "be5" / "fold-2")
    BE.neural.write_card(models_dir / "be5" / "fold-2", {**card, "training_queries": [held]})
    with pytest.raises(EncoderError, match="be5/fold-2 trained on 1 queries outside fold 2's training folds"):
        evaluate_retrieval(bench, split, method_adapters.EngineRetrieverMethod("dense-encoder", model="be5", device="cpu"),
                           ks=(1, 10), pool="gold", per_query=False, overlap=False)


def test_retrieve_and_rerank_with_a_bi_encoder_per_fold_uses_each_folds_models_and_refuses_leaking_ones(
        be5, bench, models_dir, tmp_path):
    """First stage: a fine-tuned bi-encoder stored per fold (``dense-encoder`` model=NAME → NAME/fold-<f> for
    held-out fold f); second stage: a feature classifier trained per fold inside the run, then stored per fold.
    On a quarter of the 545 pairs' links (their queries in their file folds, their cited sources as the pool)."""
    import csv
    import dataclasses
    import shutil

    from benchmarks.loci import method_adapters, splits
    from benchmarks.loci.rerank_eval import LeakError, evaluate_rerank, gold_classes
    from detection.methods import registry
    from detection.methods.rerank import pipeline as P
    from detection.methods.rerank.rerankers import RerankerError

    small = dataclasses.replace(bench, gold=bench.gold[::4])
    split = splits.split_from_file(small, "ref_type")
    n_q = len(split.query_fold)
    _install(be5, models_dir)
    cache = tmp_path / "cache"
    m = method_adapters.EngineRetrieverMethod("dense-encoder", model="be5", device="cpu", cache_dir=cache)
    picked = []
    use_fold = m._r.use_fold
    m._r.use_fold = lambda fold, qs: picked.append(fold) or use_fold(fold, qs)
    rep = evaluate_rerank(small, split, m, "feature-logreg", {}, k=10, ks=(1, 10), pool="gold")
    assert picked[:5] == [0, 1, 2, 3, 4] and rep["pool"]["first_stage_per_fold"]
    assert [f["retriever_model"] for f in rep["folds"]] == [f"be5/fold-{f}" for f in range(5)]
    assert [(f["leaked_queries"], f["retriever_leaked_queries"]) for f in rep["folds"]] == [(0, 0)] * 5
    assert all(f["n_train_queries"] == n_q - f["n_queries"] for f in rep["folds"])
    assert sum(f["n_test_pairs"] for f in rep["folds"]) == n_q * 10  # every query scored once, in its own fold
    assert 0 <= rep["retrieval"]["mrr@10"] <= 1 and 0 <= rep["rerank"]["mrr@10"] <= 1

    # a reranker stored per fold, each trained on its training folds' candidates as that fold's bi-encoder ranks them
    gold = gold_classes(small)
    queries = list(split.query_fold)
    qtext = {s.seg_id: s.text for s in small.queries}
    pool = list(dict.fromkeys(small.cited_source_ids()))
    stext = {s.seg_id: s.text for s in small.sources}
    for f in range(5):
        r = registry.build("dense-encoder", {"model": f"be5/fold-{f}", "device": "cpu"})
        cands = P.retrieve(r, queries, [qtext[q] for q in queries], pool, [stext[s] for s in pool], 10)
        train = np.nonzero([split.query_fold[cands.query_ids[q]] != f for q in cands.qi])[0]
        registry.build("feature-logreg", {}).fit(cands.subset(train), cands.labels(gold)[train]).save(
            models_dir / "rr" / f"fold-{f}")
    stored = evaluate_rerank(small, split, m, "feature-logreg", {"model": "rr"}, k=10, ks=(1, 10), pool="gold")
    assert [f["leaked_queries"] for f in stored["folds"]] == [0] * 5 and stored["folds"][3]["n_train_queries"] > 0
    assert stored["retrieval"]["mrr@10"] == pytest.approx(rep["retrieval"]["mrr@10"])

    # refused before any retrieval: a fold's stored reranker that saw its held-out queries (fold 0's in fold 1's
    # place), and one fold's bi-encoder used for every fold (it trained on other folds' held-out queries)
    shutil.rmtree(models_dir / "rr" / "fold-1")
    shutil.copytree(models_dir / "rr" / "fold-0", models_dir / "rr" / "fold-1")
    with pytest.raises(LeakError, match="fold 1: the reranker trained on [1-9]"):
        evaluate_rerank(small, split, m, "feature-logreg", {"model": "rr"}, k=10, ks=(1, 10), pool="gold")
    one = method_adapters.EngineRetrieverMethod("dense-encoder", model="be5/fold-2", device="cpu")
    with pytest.raises(LeakError, match="every fold: the first stage \\(be5/fold-2\\) trained on [1-9]"):
        evaluate_rerank(small, split, one, "feature-logreg", {}, k=10, ks=(1, 10), pool="gold")
    # new texts (`detect`): one bi-encoder and one reranker (NAME/all when trained on all folds; here fold 0's);
    # a bi-encoder stored per fold is refused there, naming the models to choose from
    from detection.commands import run_detect
    from detection.methods.semantic.encoders import EncoderError

    q, s, out = tmp_path / "q.csv", tmp_path / "s.csv", tmp_path / "out.csv"
    q.write_text("seg_id,text\n" + "".join(f"q{i},{x.text}\n" for i, x in enumerate(small.queries[:4])),
                 encoding="utf-8")
    s.write_text("seg_id,text\n" + "".join(f"s{i},{x.text}\n" for i, x in enumerate(small.sources[:30])),
                 encoding="utf-8")
    common = {"query": str(q), "source": str(s), "output": str(out), "method": "dense-encoder", "top_k": 5,
              "cache_dir": cache, "reranker": "feature-logreg", "reranker_params": {"model": "rr/fold-0"}}
    summary = run_detect(**common, params={"model": "be5/fold-0", "device": "cpu"})
    lines = list(csv.DictReader(out.open(encoding="utf-8")))
    assert summary["rows"] == len(lines) == 20 and {r["label"] for r in lines} <= {"none", "cit.", "cf."}
    with pytest.raises(EncoderError, match="one bi-encoder per fold: name one \\(be5/fold-0, be5/fold-1"):
        run_detect(**common, params={"model": "be5", "device": "cpu"})
    # a bi-encoder named as the reranker is refused naming its kind
    with pytest.raises(RerankerError, match="model fold-0 is a bi-encoder, not a reranker"):
        evaluate_rerank(small, split, m, "feature-logreg", {"model": "be5/fold-0"}, k=10, ks=(1, 10), pool="gold")
