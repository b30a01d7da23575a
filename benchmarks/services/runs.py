"""Evaluation runs: create (a run row plus a queued job) and execute (called by the job functions in
`benchmarks.jobs`, which take the run id only). The numbers come from `benchmarks.loci` / `benchmarks.greek_sts`."""
from __future__ import annotations

import csv
import hashlib
import os
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Callable

from django.conf import settings
from django.db import transaction

from benchmarks import selectors
from benchmarks.models import (
    LOCI_KIND,
    BenchmarkVersion,
    EvaluationRun,
    GoldSimilaritySet,
    PilotRun,
    SimilarityRun,
)
from core.errors import RunError
from core.numeric import finite_or_none
from core.run_limits import (  # noqa: F401
    EVALUATION_K,
    EVALUATION_N_FOLDS,
    EVALUATION_SEED,
    EVALUATION_SHARDS,
    EVALUATION_UNIT,
    MAX_SHARDS,
)
from core.text_checks import control_character_message
from detection.services.detection import check_params, method_config
from jobs.models import Job
from jobs.services import job_create

STS_KIND = "benchmarks.greek_sts_evaluate"
PILOT_KIND = "benchmarks.pilot_sweep"

DEFAULT_KS = [1, 5, 10, 20, 50, 100]
RERANK_DEPTH = 100  # at most this many candidates per query are reranked (the run's largest k, capped)
SHARDS_HELP = EVALUATION_SHARDS.message


def rerankers() -> dict:
    """The rerankers an evaluation run may name, read from the registry when asked (``""``: none)."""
    from detection.methods import registry

    return {"": "none (retrieval only)", **{s.name: s.description for s in registry.specs(kind="reranker")}}


CALIBRATIONS = ("", "linear", "isotonic")
# What a Loci Similes run ranks each query against. Runs on different pools are never ranked together
# (the leaderboard groups by pool): the gold pool holds only the cited sources, so its figures are far higher.
POOLS = {"gold": "gold sources only (the version's cited sources)",
         "corpus": "full source corpus (every source segment of the version)"}

Progress = Callable[[float, str], None]


def code_version() -> str:
    """`git describe` of the checkout when available, else the app's constant."""
    try:
        from benchmarks.loci.evaluate import code_version as describe

        return (describe() or "")[:100] or "similia-unversioned"
    except Exception:
        return "similia-unversioned"


def _reranker_config(reranker: str, params):
    """The reranker's configuration (None without one)."""
    params = check_params(params)
    if not reranker:
        if params:
            raise RunError("reranker_params given without a reranker")
        return None
    if reranker not in rerankers():
        raise RunError(f"unknown reranker {reranker!r}; available: {', '.join(r for r in rerankers() if r)}")
    config = method_config(reranker, params, kind="reranker")
    if reranker == "cross-encoder" and not config.params.get("model"):
        raise RunError("the cross-encoder reranker needs a trained model: {\"model\": \"NAME\"} (train one first)")
    return config


def _check_ks(ks) -> list[int]:
    ks = list(ks or DEFAULT_KS)
    for k in ks:
        EVALUATION_K.check(k, RunError)
    return sorted(set(ks))


def check_version_readable(version: BenchmarkVersion, owner) -> None:
    """Refuse a run or a training on a version its owner may not read (another user's version awaiting a lead's
    approval), in the words used for a version that does not exist: nothing is learnt of it. No owner: an
    operator's command, which reads every version."""
    if owner is not None and not selectors.versions_visible_to(owner).filter(pk=version.pk).exists():
        raise RunError(f"version: no benchmark version {version.pk}")


def check_models_usable(owner, *params: dict | None, names: tuple[str, ...] = ()) -> None:
    """Refuse a model (a string value of the method parameters, or one of `names`) learnt from a version the owner
    may not read: a model trained on another user's private gold would carry that gold into their runs. A hub id
    that the worker could not fetch (downloads off) is refused here, in the worker's sentence
    (`model_store.check_fetchable`), instead of a job that fails."""
    from detection.methods.infrastructure import model_store
    from detection.models import TrainedModel

    used = [v for p in params for v in (p or {}).values() if isinstance(v, str)] + [n for n in names if n]
    for value in used:
        if "/" in value and not TrainedModel.objects.filter(name=value).exists():
            try:
                model_store.check_fetchable(value)
            except model_store.ModelUnavailable as exc:
                raise RunError(str(exc)) from None
    if owner is None:
        return
    hidden = selectors.trained_models_hidden_from(owner)
    for value in used:
        if value in hidden:
            raise RunError(f"model: no trained model {value!r} you may use (it learnt from a benchmark version "
                           "you cannot read)")


# ---------------------------------------------------------------------------------------------- create
@transaction.atomic
def evaluation_run_create(*, version: BenchmarkVersion, method: str, params: dict | None = None,
                          reranker: str = "", reranker_params: dict | None = None, ks: list[int] | None = None,
                          split: str = EvaluationRun.Split.FILE, n_folds: int = 5, seed: int = 0,
                          pool: str = "gold", shards: int | None = None, unit: str = "line", owner=None,
                          enqueue: bool = True) -> EvaluationRun:
    """Create a Loci Similes evaluation run and queue its job (queue "gpu" for transformer retrievers).

    ``unit``: search the segments (``line``), sliding windows of 2-3 of them or sentences, each hit scored on the
    segments it covers (``benchmarks.loci.unit_ranking``); refused, in a sentence, for a benchmark whose segments
    are not lines of a text (:func:`check_unit_fits`).

    The job ranks the held-out queries in ``shards`` shards that the workers share (default: one per
    ``JOB_SHARD_QUERIES`` queries; `benchmarks.services.evaluation_shards`); one shard runs inside the job.
    `enqueue=False` creates the queued Job row without sending it to a worker, for a caller that runs it
    in-process with `jobs.runner.run_job` (the `evaluate` command, with ``shards=1``).
    """
    check_version_readable(version, owner)
    EVALUATION_SHARDS.check(shards, RunError)
    if method not in selectors.retrieval_method_names():
        raise RunError(f"unknown retrieval method {method!r}; available: {', '.join(selectors.retrieval_method_names())}")
    if split not in EvaluationRun.Split.values:
        raise RunError(f"split must be one of {', '.join(EvaluationRun.Split.values)}")
    EVALUATION_N_FOLDS.check(n_folds, RunError)
    EVALUATION_SEED.check(seed, RunError)
    if pool not in POOLS:
        raise RunError(f"pool must be one of {', '.join(POOLS)}")
    EVALUATION_UNIT.check(unit, RunError)
    config, reranker_config = method_config(method, params, kind="retriever"), _reranker_config(reranker, reranker_params)
    params, reranker_params = dict(config.params), dict(reranker_config.params) if reranker_config else {}
    check_models_usable(owner, params, reranker_params)
    if reranker:  # a stored model needing first-stage signals this retriever does not give: refused
        from detection.methods import registry
        from detection.methods.rerank.rerankers import check_first_stage

        check_first_stage(reranker, reranker_params, method, registry.get_spec(method).signals)
    check_unit_fits(version, unit, pool)
    run = EvaluationRun.objects.create(
        summary={"pool": pool}, unit=unit, version=version, config=config.to_json(),
        reranker_config=reranker_config.to_json() if reranker_config else None, ks=_check_ks(ks), split=split,
        n_folds=int(n_folds), seed=int(seed), owner=owner, code_version=code_version())
    queue = selectors.method_queue(method)
    job_params = {"run_id": run.pk, **({"shards": shards} if shards else {})}
    if enqueue:
        run.job = job_create(kind=LOCI_KIND, params=job_params, owner=owner, queue=queue)
    else:
        run.job = Job.objects.create(kind=LOCI_KIND, params=job_params, owner=owner, queue=queue)
    run.save(update_fields=["job"])
    return run


def check_unit_fits(version: BenchmarkVersion, unit: str, pool: str) -> None:
    """Refuse a unit the version's segments cannot be searched as (windows or sentences of a benchmark whose
    segments are separate passages or prose sentences), with the sentence that says why."""
    if unit == "line":
        return
    from benchmarks.loci.evaluate import source_pool
    from benchmarks.loci.unit_ranking import unit_problem

    bench = _benchmark_from_db(version)
    name = f"{version.benchmark.name} v{version.version}"
    held = list(dict.fromkeys(g.query_id for g in bench.gold))
    pool_ids, kind = source_pool(bench, pool)
    source_text = {s.seg_id: s.text for s in bench.sources}
    problem = unit_problem(unit, name=name, side="query segments with gold", ids=[q.seg_id for q in bench.queries],
                           texts=[q.text for q in bench.queries], held=held) or \
        unit_problem(unit, name=name, side=f"segments of its {kind} pool", ids=pool_ids,
                     texts=[source_text[s] for s in pool_ids])
    if problem:
        raise RunError(problem)


@transaction.atomic
def similarity_run_create(*, gold_set: GoldSimilaritySet, method: str, params: dict | None = None,
                          calibration: str = "", owner=None) -> SimilarityRun:
    """Create a similarity run on a gold set and queue its job (queue "gpu" for transformer methods)."""
    if owner is not None and not selectors.gold_set_readable(gold_set=gold_set, user=owner):
        raise RunError(f"gold_set: no gold set {gold_set.pk}")
    if method not in selectors.similarity_method_names():
        raise RunError(f"unknown similarity method {method!r}; available: {', '.join(selectors.similarity_method_names())}")
    if calibration not in CALIBRATIONS:
        raise RunError("calibration must be empty, 'linear' or 'isotonic'")
    config = method_config(method, params, kind="pair_scorer")
    params = dict(config.params)
    check_models_usable(owner, params)
    if selectors.similarity_method_needs_model(method) and not params.get("model"):
        raise RunError(f"method {method!r} needs a model in params: a name from the models directory or a hub id, "
                       f"e.g. {{\"model\": \"org/name\"}}")
    run = SimilarityRun.objects.create(gold_set=gold_set, config=config.to_json(), calibration=calibration,
                                       owner=owner, code_version=code_version())
    run.job = job_create(kind=STS_KIND, params={"run_id": run.pk}, owner=owner,
                         queue=selectors.method_queue(method))
    run.save(update_fields=["job"])
    return run


def pilot_roots() -> list[Path]:
    """Folders a pilot's verses file may come from: the data folder, the shared data folder and the
    folder of uploaded verses files."""
    return [Path(settings.DATA_DIR).resolve(), Path(settings.SHARED_DATA_DIR).resolve(),
            pilot_upload_dir().resolve()]


def pilot_upload_dir() -> Path:
    return Path(settings.VAR_DIR) / "pilot_verses"


_PILOT_COLUMNS = {"type_id", "id", "idoriginal_poem", "idgroup", "verse"}


def _has_pilot_header(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            header = next(csv.reader(fh), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return _PILOT_COLUMNS <= {h.strip() for h in header}


def pilot_verses_files() -> dict[str, Path]:
    """The verses files a pilot may use, by key (what a form or client sends; never a path): CSVs with the
    pilot's columns in `dbbe/` of the data folders, and uploaded files. Keys look like
    `data:dbbe/dbbe_verses_sample.csv`, `shared:dbbe/…` and `upload:<hash>-<name>.csv`."""
    found: dict[str, Path] = {}
    data, shared, uploads = pilot_roots()
    for label, folder in (("data", data / "dbbe"), ("shared", shared / "dbbe"), ("upload", uploads)):
        if not folder.is_dir():
            continue
        base = uploads if label == "upload" else folder.parent
        for path in sorted(folder.glob("*.csv")):
            if path.is_file() and _has_pilot_header(path):
                found[f"{label}:{path.relative_to(base).as_posix()}"] = path
    return found


def default_pilot_verses_key() -> str | None:
    """The DBBE verse sample when a copy is present, else the first stored verses file, else None."""
    keys = list(pilot_verses_files())
    return next((k for k in keys if k.endswith("dbbe_verses_sample.csv")), keys[0] if keys else None)


def pilot_verses_upload(*, name: str, data: bytes) -> str:
    """Check an uploaded verses CSV (size, UTF-8, the pilot's columns, every row) and store it under a name
    made from its content hash; returns its key for `pilot_run_create`. A bad file is a RunError naming
    the line."""
    from benchmarks.greek_sts import pilots

    limit = settings.SIMILIA_MAX_UPLOAD_BYTES
    if len(data) > limit:
        raise RunError(f"{name}: the file is {len(data):,} bytes; the limit is {limit:,} (SIMILIA_MAX_UPLOAD_MB)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise RunError(f"{name}:{line}: not UTF-8; save the file as UTF-8") from None
    problem = control_character_message(text)  # NUL, BEL, an RTL override …
    if problem:
        raise RunError(f"{name}, {problem}")
    folder = pilot_upload_dir()
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(name).stem)[:60] or "verses"
    target = folder / f"{hashlib.sha256(data).hexdigest()[:12]}-{stem}.csv"
    with tempfile.NamedTemporaryFile("wb", suffix=".csv", dir=folder, delete=False) as tmp:
        tmp.write(data)
    try:
        try:
            verses = pilots.read_verses_csv(tmp.name)
        except (ValueError, KeyError, csv.Error) as exc:
            raise RunError(str(exc).replace(tmp.name, name)) from None
        if len(verses) < 2:
            raise RunError(f"{name}: a pilot needs at least two verses, the file has {len(verses)}")
        os.replace(tmp.name, target)
    finally:
        if os.path.exists(tmp.name):
            os.unlink(tmp.name)
    return f"upload:{target.name}"


def resolve_verses_file(verses_file: str) -> Path:
    """A stored verses file by key (see `pilot_verses_files`), or, for platform callers, an existing file
    inside one of `pilot_roots()` (relative paths are taken under the data folder)."""
    stored = pilot_verses_files().get(verses_file)
    if stored is not None:
        return stored.resolve()
    candidate = Path(verses_file)
    if not candidate.is_absolute():
        candidate = Path(settings.DATA_DIR) / candidate
    candidate = candidate.resolve()
    if not any(candidate.is_relative_to(root) for root in pilot_roots()):
        raise RunError(f"verses file must lie under {' or '.join(str(r) for r in pilot_roots())}")
    if not candidate.is_file():
        raise RunError(f"verses file {verses_file!r} not found")
    return candidate


@transaction.atomic
def pilot_run_create(*, verses_file: str, method: str, level: str = PilotRun.Level.VERSE,
                     params: dict | None = None, owner=None) -> PilotRun:
    """Create a DBBE pilot sweep (P/R/F1 vs threshold) and queue its job."""
    if method not in selectors.similarity_method_names():
        raise RunError(f"unknown similarity method {method!r}")
    if level not in PilotRun.Level.values:
        raise RunError("level must be 'verse' or 'type'")
    path = resolve_verses_file(verses_file)
    config = method_config(method, params, kind="pair_scorer")
    run = PilotRun.objects.create(verses_file=str(path), level=level, config=config.to_json(),
                                  owner=owner, code_version=code_version())
    run.job = job_create(kind=PILOT_KIND, params={"run_id": run.pk}, owner=owner,
                         queue=selectors.method_queue(method))
    run.save(update_fields=["job"])
    return run


# --------------------------------------------------------------------------------------------- execute
def _benchmark_from_db(version: BenchmarkVersion):
    """The pure `benchmarks.loci.data.Benchmark` of a stored version (gold merged one per pair)."""
    from benchmarks.loci import data as D

    def segments(corpus_id):  # rows as tuples: a tenth of the time of model instances (87,854 sources: 0.16 s)
        return [D.Segment(*row) for row in selectors.segments_of(corpus_id=corpus_id).values_list(
            "seg_id", "text", "author", "work", "citation")]

    raw = [D.GoldLink(q, s, t, pid, fold, prov)
           for q, s, t, pid, fold, prov in version.gold.values_list(
               "query__seg_id", "source__seg_id", "ref_type", "pair_id", "fold", "provenance")]
    per_query: dict[str, Counter] = {}
    for link in raw:
        if link.fold is not None:
            per_query.setdefault(link.query_id, Counter())[link.fold] += 1
    folds = {q: min(c, key=lambda f: (-c[f], f)) for q, c in per_query.items()}
    return D.Benchmark(version.benchmark.name, segments(version.query_corpus_id), segments(version.source_corpus_id),
                       D.merge_links(raw), raw, {"db": folds} if folds else {}, version=version.version,
                       meta={"files": version.provenance.get("files", [])})


def run_pool(run: EvaluationRun) -> str:
    """The pool a run ranks against: "gold" for runs made before the choice existed (they used "auto",
    which is "gold" on a version whose source corpus holds only the cited sources)."""
    pool = (run.summary or {}).get("pool")
    if pool:
        return pool
    return ((run.report or {}).get("pool") or {}).get("kind") or "gold"


def _loci_summary(report: dict, ks: list[int]) -> dict:
    summary = {"pool": (report.get("pool") or {}).get("kind")}
    for k in ks:
        summary[f"recall@{k}"] = finite_or_none(report.get(f"recall@{k}"))
        summary[f"mrr@{k}"] = finite_or_none(report.get(f"mrr@{k}"))
        for view, short in (("cit.", "cit"), ("cf.", "cf")):
            summary[f"{short}_recall@{k}"] = finite_or_none(report.get("by_type", {}).get(view, {}).get(f"recall@{k}"))
    rerank = report.get("rerank") or {}
    for k in ks:
        for key in (f"recall@{k}", f"mrr@{k}"):
            if key in (rerank.get("rerank") or {}):
                summary[f"rerank_{key}"] = finite_or_none(rerank["rerank"][key])
    for view, short in (("cit.", "cit"), ("cf.", "cf")):
        f1 = (((rerank.get("classification") or {}).get(view) or {}).get("mean") or {}).get("f1") or {}
        if "mean" in f1:
            summary[f"rerank_{short}_f1"] = finite_or_none(f1["mean"])
    pairwise = report.get("pairwise") or {}
    pooled = (((pairwise.get("classification") or {}).get("all") or {}).get("mean") or {}).get("pooled") or {}
    for metric in ("p", "r", "f1"):
        if metric in pooled:
            summary[f"pairwise_{metric}"] = finite_or_none(pooled[metric].get("mean"))
    return summary


def evaluation_benchmark(run: EvaluationRun):
    """``(bench, split)`` of a Loci Similes run: the version's benchmark from the database and the run's split."""
    from benchmarks.loci import splits as S

    bench = _benchmark_from_db(run.version)
    if run.split == EvaluationRun.Split.GROUPED or "db" not in bench.file_folds:
        split = S.grouped_kfold(bench, n_folds=run.n_folds, seed=run.seed)
    else:
        split = S.split_from_file(bench, "db")
    return bench, split


def retrieval_method(run: EvaluationRun):
    """The run's retrieval method, not fitted: built from the configuration the run stored when it was created."""
    from benchmarks.loci import method_adapters as LM

    return LM.EngineRetrieverMethod(run.method, config=run.method_config)


def _pair_scorer(run):
    from detection.methods import registry

    return registry.build_config(run.method_config)


def evaluation_run_execute(*, run: EvaluationRun, ranking, progress: Progress,
                           log: Callable[[str], None], benchmark: tuple | None = None, method=None) -> dict:
    """Evaluate `run` with `benchmarks.loci.evaluate` and store the report; returns the summary.

    ``ranking``: the held-out queries ranked by the shards of the run's job (`benchmarks.loci.evaluate.Ranking`;
    `benchmarks.services.evaluation_shards`, one or several workers); the metrics, the pairwise and the rerank
    sections follow here. ``benchmark``: the run's ``(bench, split)`` when the caller already holds them
    (:func:`evaluation_benchmark`), else they are read from the database. ``method``: the retrieval method object
    that ranked the queries in this process; a method that keeps its encodings (a bi-encoder) is refitted for the
    pairwise and rerank sections, so no text is encoded twice in the run (the counts are in the result)."""
    from benchmarks.loci import evaluate as E
    from benchmarks.loci import method_adapters as LM
    from benchmarks.loci import splits as S

    progress(0.72, "loading gold from the database" if benchmark is None else "gold loaded")
    bench, split = benchmark if benchmark is not None else evaluation_benchmark(run)
    if method is None or not method.keeps_encodings:
        method = retrieval_method(run)
    log(f"{len(bench.queries)} query segments, {len(bench.sources)} source segments, {len(bench.gold)} distinct "
        f"gold pairs ({len(bench.raw_links)} rows)")
    log(f"method {run.method} ({method.implementation}), split {split.name}, ks {run.ks}")
    ks = run.ks or DEFAULT_KS
    pool = run_pool(run)
    report = E.evaluate_retrieval(bench, split, method, ks=tuple(ks), seed=run.seed, pool=pool, ranking=ranking,
                                  benchmark_info={**bench.summary(), "version_id": run.version_id})
    report["unit"] = run.unit  # the ranking's; the pairwise and rerank sections below score the segments
    # The per-fold pairwise documents give P/R/F1 vs retrieval depth k (Table 12), and with a reranker the
    # classification tables (Tables 3, 5) and retrieve-and-rerank beside retrieval-only.
    pools = S.build_fold_pools(bench, split, seed=run.seed)
    # the parameter-free lexical scorer classifies the whole pairwise grid (Tables 3, 5); any reranker is also
    # evaluated as retrieve-and-rerank against the full pool below
    scorer = LM.LexicalRuleScorer() if run.reranker == "lexical-rule" else None
    retriever = method

    def pairwise_progress(fraction, message=""):
        progress(0.75 + 0.14 * fraction, f"pairwise: {message}")

    report["pairwise"] = E.evaluate_pairwise(bench, split, pools, scorer=scorer, retriever=retriever,
                                             progress=pairwise_progress)
    if run.reranker:
        report["rerank"] = _rerank_section(run, bench, split, ks, progress, log,
                                           retriever=method if method.keeps_encodings else None)
    per_query = report.pop("per_query", [])
    run.ranked = report.pop("ranked", {})
    report["trec_depth"] = max((len(v) for v in run.ranked.values()), default=0)  # what the TREC export holds
    run.report = report
    run.per_query = per_query
    run.per_fold = report.get("folds", [])
    run.summary = _loci_summary(report, ks)
    run.code_version = (report.get("code_version") or run.code_version)[:100]
    run.save(update_fields=["report", "per_query", "per_fold", "ranked", "summary", "code_version"])
    progress(1.0, "stored")
    encoded = method.encoded()
    if encoded is not None:
        log(f"{run.method}: {encoded['passages']} passages and {encoded['queries']} queries encoded in this process")
    return {"run_id": run.pk, **run.summary, **({"encoded": encoded} if encoded is not None else {})}


def _rerank_section(run: EvaluationRun, bench, split, ks, progress: Progress, log, retriever=None) -> dict:
    """Retrieve-and-rerank on held-out folds (``benchmarks.loci.rerank_eval``): the run's retriever over the
    version's whole source pool, top-``RERANK_DEPTH``, the reranker trained per fold on the other folds."""
    from benchmarks.loci.rerank_eval import evaluate_rerank

    if retriever is None:
        retriever = retrieval_method(run)
    config = run.reranker_method_config  # validated when the run was created; the digest checked; built as it is
    params = dict(config.params)
    depth = min(RERANK_DEPTH, max(ks))
    log(f"rerank: {run.reranker} {params} on the top {depth} of {run.method}")
    rep = evaluate_rerank(bench, split, retriever, config, k=depth,
                          ks=tuple(k for k in ks if k <= RERANK_DEPTH) or (1, 10),
                          progress=lambda f, m="": progress(0.9 + 0.09 * f, f"rerank: {m}"))
    leaks = sum(f["leaked_queries"] for f in rep["folds"])
    if leaks and not params.get("model"):
        raise RunError(f"rerank trained on {leaks} held-out queries")  # impossible by construction
    return rep


def _fit_texts(gold_pairs) -> list[str]:
    return list(dict.fromkeys([p.reference_text for p in gold_pairs] + [p.candidate_text for p in gold_pairs]))


def similarity_run_execute(*, run: SimilarityRun, progress: Progress, log: Callable[[str], None]) -> dict:
    """Score the gold set's pairs with the method (`benchmarks.greek_sts.evaluate`) and store the report."""
    from benchmarks.greek_sts.evaluate import evaluate_method
    from benchmarks.greek_sts.gold_files import GoldPair

    pairs = [GoldPair(*row) for row in run.gold_set.pairs.values_list(
        "reference_id", "candidate_id", "reference_text", "candidate_text", "score")]
    progress(0.0, f"fitting {run.method} on {len(pairs)} pairs' texts")
    method = _pair_scorer(run)
    method.fit(_fit_texts(pairs))
    log(f"method {run.method} fitted; calibration {run.calibration or 'none'}")
    report = evaluate_method(pairs, method, calibration=run.calibration or None,
                             progress=lambda f, m="": progress(0.1 + 0.85 * f, m))
    run.report = report
    run.rmse, run.spearman, run.pearson = (finite_or_none(report.get(k)) for k in ("rmse", "spearman", "pearson"))
    run.save(update_fields=["report", "rmse", "spearman", "pearson"])
    progress(1.0, "stored")
    return {"run_id": run.pk, "rmse": run.rmse, "spearman": run.spearman, "pearson": run.pearson}


def pilot_run_execute(*, run: PilotRun, progress: Progress, log: Callable[[str], None]) -> dict:
    """Run the DBBE pilot sweep (`benchmarks.greek_sts.pilots.sweep`) and store the rows and the best threshold."""
    from benchmarks.greek_sts import pilots

    verses = pilots.read_verses_csv(resolve_verses_file(run.verses_file))
    log(f"{len(verses)} verses from {Path(run.verses_file).name}, level {run.level}")
    method = _pair_scorer(run)
    result = pilots.sweep(verses, level=run.level, method=method, fit_texts=[v.text for v in verses],
                          progress=lambda f, m="": progress(0.95 * f, m))
    report = result.to_dict()
    run.report = report
    run.rows = report["rows"]
    run.best_threshold, run.best_f1 = report["best"]["threshold"], report["best"]["f1"]
    run.save(update_fields=["report", "rows", "best_threshold", "best_f1"])
    progress(1.0, "stored")
    return {"run_id": run.pk, "best_threshold": run.best_threshold, "best_f1": run.best_f1}
