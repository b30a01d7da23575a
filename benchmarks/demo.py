"""Demo data: the Loci Similes 545-pair benchmark and the DBBE Greek STS gold (idempotent)."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

from benchmarks.services import benchmark_import_545, gold_set_import_file
from core.demo import DEMO_OWNER

LOCI_NAME = "loci-similes-545"
STS_NAME = "dbbe-sts-medieval-greek"


def load_demo_benchmarks() -> str:
    data = Path(settings.DATA_DIR)
    lines = []
    loci = data / "locisimiles"
    if (loci / "pairs_545_with_text.csv").exists():
        version, created = benchmark_import_545(
            with_text_path=loci / "pairs_545_with_text.csv", ref_type_path=loci / "pairs_545_ref_type.csv",
            name=LOCI_NAME, version="1",
            description="545 expert-verified Jerome/Lactantius references with cit./cf. types (Loci Similes).")
        lines.append(f"{LOCI_NAME} v1: {version.gold.count()} gold references ({'loaded' if created else 'present'})")
    else:
        lines.append(f"{LOCI_NAME}: {loci} missing, skipped")
    sts = data / "dbbe" / "STS_benchmark_medievalGreek.tsv"
    if sts.exists():
        gold_set, created = gold_set_import_file(
            path=sts, name=STS_NAME, if_exists="return",
            source_description="Swaelens et al., Byzantine Greek book epigrams STS benchmark (DBBE).")
        lines.append(f"{STS_NAME}: {gold_set.pairs.count()} pairs ({'loaded' if created else 'present'})")
    else:
        lines.append(f"{STS_NAME}: {sts} missing, skipped")
    if getattr(settings, "SIMILIA_DEMO_RUNS", False):
        lines.append(_queue_demo_runs())
    return "; ".join(lines)


def _queue_demo_runs() -> str:
    """Queue a few cheap runs for the worker, so the leaderboards are not empty on a first visit."""
    from django.contrib.auth import get_user_model

    from benchmarks.models import BenchmarkVersion, EvaluationRun, GoldSimilaritySet, SimilarityRun
    from benchmarks.services.runs import evaluation_run_create, similarity_run_create

    owner = get_user_model().objects.filter(username=DEMO_OWNER).first()
    queued = []
    version = BenchmarkVersion.objects.filter(benchmark__name=LOCI_NAME).first()
    if version is not None and not EvaluationRun.objects.filter(version=version).exists():
        for method in ("bm25-lemma", "tfidf-surface"):
            evaluation_run_create(version=version, method=method, owner=owner)
            queued.append(method)
        # retrieve and rerank with the feature classifier, trained per fold inside the run (no download)
        evaluation_run_create(version=version, method="bm25-lemma", reranker="feature-logreg", owner=owner)
        queued.append("bm25-lemma + feature-logreg")
    gold = GoldSimilaritySet.objects.filter(name=STS_NAME).first()
    if gold is not None and not SimilarityRun.objects.filter(gold_set=gold).exists():
        for method in ("char_ngram", "levenshtein"):
            similarity_run_create(gold_set=gold, method=method, owner=owner)
            queued.append(method)
    return f"demo runs queued for the worker: {', '.join(queued)}" if queued else "demo runs present"
