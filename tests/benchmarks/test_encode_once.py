"""An evaluation run of a fine-tuned bi-encoder stored per fold encodes each text once per fold model: the
ranking, the pairwise section (fold pools) and retrieve-and-rerank (the pool again) share one retriever that
remembers what it encoded (``BiEncoderRetriever._vectors``)."""
import shutil

import pytest

from benchmarks.models import EvaluationRun
from benchmarks.services import evaluation_run_create
from detection.methods.infrastructure import model_store
from jobs.models import Job
from jobs.runner import run_job


@pytest.fixture
def be5_models(loci_version, tmp_path, settings, monkeypatch):
    """A tiny bi-encoder per fold (fold 0 fine-tuned 2 steps on its training folds' links, the others copies
    whose cards name their own training folds' queries), installed in the models directory. The machine's cache
    is replaced by an empty one: embeddings an earlier run stored there would be read instead of encoded."""
    import torch

    monkeypatch.setenv("SIMILIA_CACHE_DIR", str(tmp_path / "cache"))

    from benchmarks.loci import splits
    from benchmarks.services.runs import evaluation_benchmark
    from detection.methods.rerank import bi_encoder as BE
    from detection.methods.rerank.tiny import build_tiny_bert

    run = EvaluationRun(version=loci_version, split="file")
    bench, split = evaluation_benchmark(run)
    assert split.n_folds == 5 and isinstance(split, splits.Split)
    torch.set_num_threads(1)
    tiny = build_tiny_bert(tmp_path / "bert", [s.text for s in bench.queries + bench.sources], hidden=16)
    settings.MODELS_DIR = tmp_path / "models"
    folder = settings.MODELS_DIR / "be5"
    idx = {s.seg_id: i for i, s in enumerate(bench.sources)}
    qtext = {s.seg_id: s.text for s in bench.queries}
    for f in range(split.n_folds):
        train_q = {q for q, g in split.query_fold.items() if g != f}
        gold = [g for g in bench.gold if g.query_id in train_q][:24]
        card = {"training_queries": sorted({g.query_id for g in gold})}
        if f == 0:
            ex = BE.build_examples([(qtext[g.query_id], idx[g.source_id]) for g in gold],
                                   [s.text for s in bench.sources], negatives="query-random", neg_ratio=1,
                                   loss="online-contrastive")
            BE.train(base_model=str(tiny), examples=ex, out_dir=folder / "fold-0",
                     options=BE.BiEncoderOptions(epochs=1, batch_size=8, max_steps=2), card=card)
        else:
            shutil.copytree(folder / "fold-0", folder / f"fold-{f}")
            BE.neural.write_card(folder / f"fold-{f}", {**BE.neural.read_card(folder / "fold-0"), **card})
    with model_store.using(settings.MODELS_DIR):
        yield bench, split


@pytest.mark.django_db
def test_a_bi_encoder_run_encodes_each_text_once_per_fold_model(loci_version, be5_models):
    bench, split = be5_models
    run = evaluation_run_create(version=loci_version, method="dense-encoder", ks=[1, 10], shards=1, enqueue=False,
                                params={"model": "be5", "device": "cpu"}, reranker="feature-logreg")
    assert run_job(run.job_id) == "succeeded", Job.objects.get(pk=run.job_id).error
    run.refresh_from_db()
    encoded = run.job.result["encoded"]
    pool = {s.text for s in bench.sources}  # the gold pool: this version's sources are the cited ones
    queries = {s.text for s in bench.queries if s.seg_id in split.query_fold}
    # every fold's model encoded the pool once and every query once, across ranking, pairwise and rerank
    assert encoded == {"passages": split.n_folds * len(pool), "queries": split.n_folds * len(queries)}
    # what separate retrievers encoded: the pool per fold twice (ranking, rerank) plus the fold pools
    pairwise = sum(r["cited"] + r["source_distractors"] for r in run.report["pairwise"]["table4"]["rows"])
    assert encoded["passages"] < 2 * split.n_folds * len(pool) + pairwise
    assert [f["retriever_model"] for f in run.report["rerank"]["folds"]] == [f"be5/fold-{f}" for f in range(5)]
    assert 0 <= run.summary["recall@10"] <= 1 and "rerank_mrr@10" in run.summary
