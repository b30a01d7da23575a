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
    first = CE.train(base_model=str(tiny), queries=Q, candidates=C, labels=Y, out_dir=out, epochs=2, batch_size=8,
                     effective_batch=16, max_length=48, max_steps=8, log=logs.append,
                     progress=lambda f, m: prog.append(m))
    assert first["epochs"] == 1 and first["steps"] == 8 and first["accumulation"] == 2
    assert (out / "checkpoint-last" / "state.json").is_file() and "pairs/s" in prog[-1] and "loss" in prog[-1]
    assert any("class exposure" in line for line in logs) and any("CPU" in line for line in logs)
    second = CE.train(base_model=str(tiny), queries=Q, candidates=C, labels=Y, out_dir=out, epochs=2, batch_size=8,
                      effective_batch=16, max_length=48, log=logs.append)
    assert "resuming from the checkpoint of epoch 1" in logs and second["epochs"] == 2 and second["steps"] == 16
    tok, model, card = CE.load(out)
    assert card["kind"] == "cross-encoder" and card["versions"]["torch"]
    p = CE.predict_proba(tok, model, Q[:6], C[:6], max_length=48, batch_size=4)
    assert p.shape == (6, 3) and np.allclose(p.sum(1), 1, atol=1e-5)


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
        CE.train(base_model=str(small), queries=Q, candidates=C, labels=Y, out_dir=tmp_path / "b", max_steps=1)
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
    summary = BE.train(base_model=str(tiny), examples=ex, out_dir=tmp_path / "be", loss=loss, epochs=1,
                       batch_size=16, max_steps=3)
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
    return BE.train(base_model=str(tiny), examples=ex, out_dir=out, epochs=1, batch_size=8, max_steps=steps,
                    card={"training_queries": sorted({g.query_id for g in gold})})


def test_a_fine_tuned_bi_encoder_is_a_first_stage_retriever_by_its_registered_name(tiny, bench, models_dir):
    from detection.methods import registry
    from detection.methods.encoders import EncoderError

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


def test_a_bi_encoder_stored_per_fold_is_evaluated_with_each_folds_model_and_never_a_leaking_one(tiny, bench,
                                                                                                models_dir):
    import shutil

    from benchmarks.loci import method_adapters, splits
    from benchmarks.loci.evaluate import evaluate_retrieval
    from detection.methods.encoders import EncoderError

    split = splits.split_from_file(bench, "ref_type")
    trained = models_dir / "be5" / "fold-0"
    _train_tiny_bi_encoder(tiny, bench, trained, {q for q, f in split.query_fold.items() if f != 0})
    for f in range(1, split.n_folds):  # the other folds' models: copies carrying their own training queries
        shutil.copytree(trained, models_dir / "be5" / f"fold-{f}")
        card = BE.neural.read_card(models_dir / "be5" / f"fold-{f}")
        train_q = {q for q, g in split.query_fold.items() if g != f}
        BE.neural.write_card(models_dir / "be5" / f"fold-{f}",
                             {**card, "training_queries": sorted({g.query_id for g in bench.gold
                                                                  if g.query_id in train_q})[:24]})
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
