"""Training second-stage models per fold on a benchmark version: create (validate, queue a job) and execute.

The version is read by the app that stores it: it hands this module a reference for the job's parameters
(create) and the queries, sources, gold and folds as a :class:`TrainingData` (execute); see
``benchmarks.services.model_training``. The job kind keeps the name it was stored under (``benchmarks.train_model``).

One job trains one model per fold, each on the *other* folds' queries only (never on its held-out fold), plus
optionally one on all folds (``<name>/all``, the model to apply to new texts). Files are written to a work folder
``MODELS_DIR/.training/job-<id>`` (neural trainers checkpoint there each epoch, so a restarted job resumes);
only when every fold is done is the folder moved to ``MODELS_DIR/<name>`` and the models registered
(:class:`detection.models.TrainedModel`, one row per fold), in one transaction: a failed job registers nothing.

Kinds: ``feature-classifier`` (``method`` feature-logreg / feature-hgb / feature-ltr, the learning-to-rank model;
cpu queue), ``cross-encoder`` (3 classes)
and ``bi-encoder`` (sentence-transformers), both on the gpu queue (the CPU when a worker has no GPU, saying so).
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from django.db import transaction

from core.errors import RunError
from core.numeric import json_safe
from core.run_limits import TRAINING_K
from detection.services.detection import check_params
from jobs.models import Job
from jobs.services import job_create

TRAIN_KIND = "benchmarks.train_model"
KINDS = ("feature-classifier", "cross-encoder", "bi-encoder")
FEATURE_METHODS = ("feature-logreg", "feature-ltr")
#: experiments that no stored figure supports: not trained any more; models trained earlier still load and rerank
RETIRED_METHODS = {"feature-hgb": "gradient boosting has no stored figure that beats feature-ltr (docs/guide/rerank.md); "
                                  "models trained with it earlier still rerank"}
NEURAL_DEFAULTS = {
    "cross-encoder": {"epochs": 4, "lr": 2e-5, "batch_size": 32, "effective_batch": 64, "max_length": 256,
                      "class_probs": "0.8,0.1,0.1", "neg_ratio": 4, "seed": 42, "max_steps": None},
    "bi-encoder": {"epochs": 4, "lr": 2e-5, "batch_size": 32, "warmup": 0.1, "loss": "online-contrastive",
                   "negatives": "query-random", "neg_ratio": 1, "seed": 42, "max_steps": None},
}
_RANGES = {"epochs": (1, 50), "lr": (1e-7, 1e-2), "batch_size": (1, 1024), "effective_batch": (1, 4096),
           "max_length": (16, 4096), "neg_ratio": (1, 10), "seed": (0, 2**31 - 1), "warmup": (0.0, 0.5),
           "max_steps": (1, 10**7)}


class TrainingError(RunError):
    """A training request that cannot be honoured."""


@dataclass(frozen=True)
class TrainingData:
    """What training reads of a benchmark version, resolved by the app that stores it:

    - ``bench``: its ``queries`` and ``sources`` (items with ``seg_id`` and ``text``);
    - ``split``: its folds (``name``, ``n_folds``, ``query_fold`` {query id: fold}, ``fold_queries(fold)``), every
      query with a fold (user-promoted gold on new queries included);
    - ``gold``: {(query id, source id): class}, 1 cit. and 2 cf.;
    - ``first_stage(config)``: the retriever whose candidates a reranker learns from, built from the job's
      ``MethodConfig`` (``registry.build_config``, not validated again) as a retrieval method
      (``fit``, ``search_signals`` — the top k with the first stage's per-candidate signals, as the suite gets
      them —, ``describe``, ``seen_queries``, and ``fold_models`` / ``use_fold`` for a model stored per fold);
    - ``label``: where the models learnt, stored on every ``TrainedModel`` ("NAME vN (split)").
    """

    bench: Any
    split: Any
    gold: dict
    first_stage: Callable[[Any], Any]
    label: str


def _check_neural_params(kind: str, params: dict) -> dict:
    defaults = NEURAL_DEFAULTS[kind]
    unknown = set(params) - set(defaults)
    if unknown:
        raise TrainingError(f"unknown training parameter(s) {sorted(unknown)} for a {kind}; allowed: "
                            f"{', '.join(defaults)}")
    out = {**defaults, **params}
    for key, (lo, hi) in _RANGES.items():
        if key in out and out[key] is not None:
            value = out[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
                raise TrainingError(f"{key} must be a number between {lo} and {hi}")
    if kind == "cross-encoder":
        from detection.methods.rerank.cross_encoder import CrossEncoderOptions, parse_class_probs

        options = CrossEncoderOptions
        try:
            parse_class_probs(out["class_probs"])
        except (TypeError, ValueError) as exc:
            raise TrainingError(str(exc)) from None
    else:
        from detection.methods.rerank.bi_encoder import NEGATIVES, BiEncoderOptions

        options = BiEncoderOptions
        if out["negatives"] not in NEGATIVES:
            raise TrainingError(f"negatives must be one of {', '.join(NEGATIVES)}")
    try:  # the trainer's options dataclass checks what it declares (the effective batch, the loss)
        options.from_params(out)
    except ValueError as exc:
        raise TrainingError(str(exc)) from None
    return out


def _check_name(name: str) -> str:
    from detection.methods.infrastructure import model_store
    from detection.models import TrainedModel

    try:
        model_store.check_model_name(name)
    except ValueError as exc:
        raise TrainingError(str(exc)) from None
    if "/" in name:
        raise TrainingError("a trained model's name has no '/': its folds are stored as <name>/fold-<f>")
    if TrainedModel.objects.filter(name__startswith=name + "/").exists() or model_store.local_path(name):
        raise TrainingError(f"a model named {name!r} already exists")
    return name


def _neural_method(kind: str) -> str:
    """The ``method`` a neural model is registered under (a cross-encoder is one; a bi-encoder is a retriever's
    model, no method)."""
    return "cross-encoder" if kind == "cross-encoder" else ""


@dataclass(frozen=True)
class TrainingRequest:
    """What a training job carries (:meth:`to_job`) and its worker reads back (:meth:`from_job`): the first stage
    and a feature classifier's method as ``MethodConfig`` (validated once, by ``training_job_create``, and carried
    as ``to_json()`` with their digests), a neural model's trainer options (``NEURAL_DEFAULTS`` filled in), and the
    run's own values."""

    kind: str
    name: str
    retriever: Any  # MethodConfig of the first stage
    reranker: Any = None  # MethodConfig of a feature classifier's method (its ``model`` unset); None for neural kinds
    options: dict | None = None  # a neural model's trainer options; None for a feature classifier
    base_model: str = ""
    k: int = 100
    final_model: bool = False

    @property
    def method(self) -> str:
        return self.reranker.name if self.reranker is not None else _neural_method(self.kind)

    @property
    def params(self) -> dict:
        """What every model it registers stores as ``params``: the feature method's parameters less ``model`` (the
        name a reranker is applied with, not a training value), or the neural trainer's options."""
        if self.reranker is not None:
            return {k: v for k, v in self.reranker.params.items() if k != "model"}
        return dict(self.options or {})

    def to_job(self) -> dict:
        return {"kind": self.kind, "name": self.name, "base_model": self.base_model,
                "retriever": self.retriever.to_json(),
                "reranker": self.reranker.to_json() if self.reranker is not None else None,
                "options": self.options, "k": self.k, "final_model": self.final_model}

    @classmethod
    def from_job(cls, params: dict) -> TrainingRequest:
        """The request a job row carries, each configuration's digest checked (``registry.carried_config``: not
        validated again)."""
        from detection.methods import registry

        missing = [key for key in ("kind", "name", "retriever", "k") if key not in params]
        if missing:
            raise TrainingError(f"the training job's parameters lack {', '.join(missing)}: queue it again")
        kind = params["kind"]
        if kind not in KINDS:
            raise TrainingError(f"the training job's kind must be one of {', '.join(KINDS)}, not {str(kind)[:40]!r}")
        feature = kind == "feature-classifier"
        carried = params.get("reranker")
        if feature != bool(carried):
            raise TrainingError("a feature classifier's training job carries its method's configuration, a neural "
                                "one none: queue it again")
        reranker = registry.carried_config(carried, kind="reranker") if carried else None
        options = None if feature else dict(params.get("options") or {})
        retriever = registry.carried_config(params["retriever"], kind="retriever")
        return cls(kind=kind, name=params["name"], retriever=retriever, reranker=reranker, options=options,
                   base_model=params.get("base_model") or "", k=int(params["k"]),
                   final_model=bool(params.get("final_model")))


@transaction.atomic
def training_job_create(*, data: dict, kind: str, name: str, method: str = "",
                        base_model: str = "", params: dict | None = None, retriever: str = "bm25-lemma",
                        retriever_params: dict | None = None, k: int = 100, final_model: bool | None = None,
                        owner=None, enqueue: bool = True, models_usable: Callable | None = None) -> Job:
    """Validate a training request and queue its job (``gpu`` for neural kinds, ``cpu`` for features).

    ``data``: the job's reference to the version it trains on (``{"version_id": PK}``, which the job kind's
    handler resolves into a :class:`TrainingData`); ``models_usable(*params, names=...)``: the owning app's refusal
    of a model the owner may not use (a model learnt from a version they cannot read).

    ``retriever`` / ``retriever_params`` give the first stage whose candidates a reranker learns from; a
    bi-encoder stored per fold (``dense-encoder`` with ``{"model": NAME}``) gives fold f's reranker the candidates
    of ``NAME/fold-<f>`` (and ``<name>/all`` those of ``NAME/all``, trained only when that model exists).

    The job carries a :class:`TrainingRequest`: the first stage and a feature classifier's method as
    ``MethodConfig.to_json()`` (``registry.configure`` here is their one validation)."""
    from detection.methods import registry
    from detection.methods.infrastructure import model_store

    if kind not in KINDS:
        raise TrainingError(f"kind must be one of {', '.join(KINDS)}")
    params = dict(params or {})
    name = _check_name(name)
    retriever_config = registry.configure(retriever, check_params(retriever_params), kind="retriever")
    retriever_params = dict(retriever_config.params)
    per_fold, has_all = _stored_per_fold(retriever_params)
    k = TRAINING_K.check(k, TrainingError)
    reranker_config, options = None, None
    if kind == "feature-classifier":
        if method not in FEATURE_METHODS:
            why = f" ({method} is no longer trained: {RETIRED_METHODS[method]})" if method in RETIRED_METHODS else ""
            raise TrainingError(f"a feature classifier's method is one of {', '.join(FEATURE_METHODS)}{why}")
        params.pop("model", None)
        reranker_config = registry.configure(method, check_params(params), kind="reranker")
        queue = "cpu"
    else:
        if not base_model:
            raise TrainingError(f"a {kind} needs base_model: a model name in the models directory or a hub id")
        try:
            model_store.check_model_name(base_model)
        except ValueError as exc:
            raise TrainingError(str(exc)) from None
        options = _check_neural_params(kind, params)
        queue = "gpu"
    final = (kind == "feature-classifier" and (has_all or not per_fold)) if final_model is None else bool(final_model)
    request = TrainingRequest(kind=kind, name=name, retriever=retriever_config, reranker=reranker_config,
                              options=options, base_model=base_model, k=int(k), final_model=final)
    if models_usable is not None:
        models_usable(retriever_params, request.params, names=(base_model,))
    if final and per_fold and not has_all and kind != "bi-encoder":
        raise TrainingError(f"a final model needs the first stage {retriever_params['model']}/all, which does not "
                            f"exist: train the bi-encoder with a final model, or ask for none")
    job_params = {**data, **request.to_job()}
    if not enqueue:  # the train_model command runs it in-process (jobs.runner.run_job)
        return Job.objects.create(kind=TRAIN_KIND, owner=owner, queue=queue, params=job_params)
    return job_create(kind=TRAIN_KIND, owner=owner, queue=queue, params=job_params)


def _stored_per_fold(retriever_params: dict) -> tuple[bool, bool]:
    """(the first stage's model is stored per fold, it has an ``all`` model too)."""
    from detection.methods.infrastructure import model_store

    model = retriever_params.get("model")
    if not model or "/" in str(model):
        return False, False
    try:
        return (model_store.local_path(f"{model}/fold-0") is not None,
                model_store.local_path(f"{model}/all") is not None)
    except ValueError:
        return False, False


# --------------------------------------------------------------------------------------------- execute
def _candidates(data: TrainingData, retriever, k: int, targets, log) -> tuple[dict, dict]:
    """The first stage's top-``k`` for every query, per target fold (``None`` = all folds): one candidate set shared
    by every target for an unsupervised retriever, fold f's own model's for a retriever stored per fold (and the
    ``all`` model's for the final model). ``retriever``: the job's ``MethodConfig``. Returns ``({fold: Candidates},
    gold classes)``."""
    from detection.methods import registry
    from detection.methods.rerank import pipeline as P

    bench, split = data.bench, data.split
    queries = [q for f in range(split.n_folds) for q in split.fold_queries(f)]
    qseg = {s.seg_id: s for s in bench.queries}
    pool = [s.seg_id for s in bench.sources]
    s_texts = [s.text for s in bench.sources]
    q_texts = [qseg[q].text for q in queries]
    # every query in the version's order, so a first stage reading neighbouring lines reads each query's own
    lines = [s.text for s in bench.queries]
    line_of = {s.seg_id: i for i, s in enumerate(bench.queries)}
    line_index = [line_of[q] for q in queries]
    m = data.first_stage(retriever)
    out: dict = {}
    for fold in ([f for _, f in targets] if m.fold_models else [None]):
        rm = m
        if m.fold_models and fold is None:
            # the same configuration with the stored model's ``all`` member (trained on every fold)
            rm = data.first_stage(registry.configure(
                retriever.name, {**retriever.params, "model": f"{retriever.params['model']}/all"}, kind=retriever.kind))
        elif m.fold_models:
            m.use_fold(fold, [q for q, f in split.query_fold.items() if f != fold])
        rm.fit(pool, s_texts)
        # the held-out queries of every fold this first stage serves (a shared one serves all fold targets)
        served = [fold] if m.fold_models else [f for _, f in targets]
        held_out = {q for f in served if f is not None for q in split.fold_queries(f)}
        leaked = rm.seen_queries() & held_out
        if leaked:  # never register a reranker downstream of a first stage that saw its held-out fold
            raise TrainingError(f"the first stage {(rm.describe().get('retriever') or {}).get('model')} trained on "
                                f"{len(leaked)} held-out queries of the folds it would serve")
        # with the first stage's own per-candidate signals (channels: each channel's score), as the suite gets them
        idx, sc, sig, names = rm.search_signals(queries, q_texts, min(k, len(pool)), lines=lines,
                                                line_index=line_index)
        out[fold] = P.from_topk(queries, q_texts, pool, s_texts, idx, sc,
                                {"retriever": retriever.name, "retriever_params": _given(retriever),
                                 "retriever_model": (rm.describe().get("retriever") or {}).get("model")}, sig, names)
    first = next(iter(out.values()))
    which = "" if len(out) == 1 else f" per fold ({', '.join(str(c.meta['retriever_model']) for c in out.values())})"
    log(f"{retriever.name}{which}: top-{k} of {len(pool)} sources for {len(queries)} queries = {len(first)} candidates"
        + (f", with {len(first.extra_names)} first-stage signals ({', '.join(first.extra_names)})"
           if first.extra_names else ""))
    return ({fold: out.get(fold, first) for _, fold in targets}), data.gold


def _given(config) -> dict:
    """A first stage's parameters that differ from its defaults (what a model card records, as the suite's do:
    ``{"profile": "prose"}``)."""
    from detection.methods import registry

    defaults = registry.get_spec(config.name).defaults()
    return {k: v for k, v in config.params.items() if k not in defaults or defaults[k] != v}


def _held_out_mrr(cands, probs, rows, gold, k: int = 10) -> dict:
    """MRR@k of the held-out fold's candidates, retrieval order vs reranked (quick check stored with the model)."""
    from detection.methods.rerank import pipeline as P

    sub = cands.subset(rows)
    out = {}
    for stage, order_idx in (("retrieval", None), ("rerank", P.reranked_topk(sub, probs)[0])):
        rr = []
        for q in np.unique(sub.qi):
            qid = sub.query_ids[q]
            if order_idx is None:
                m = sub.qi == q
                ranked = [sub.source_ids[s] for s in sub.si[m][np.argsort(sub.rank[m])]]
            else:
                ranked = [sub.source_ids[s] for s in order_idx[q] if s >= 0]
            hit = next((i for i, s in enumerate(ranked[:k], 1) if (qid, s) in gold), None)
            rr.append(1.0 / hit if hit else 0.0)
        out[f"{stage}_mrr@{k}"] = float(np.mean(rr)) if rr else None
    return out


def training_job_execute(*, job_id: int, data: TrainingData, progress: Callable, log: Callable, **job_params) -> dict:
    """Train every fold's model, then move the files in place and register them (all or nothing). ``job_params``:
    what the job carries (:meth:`TrainingRequest.from_job`, the configurations' digests checked, not validated
    again)."""
    from detection.methods.infrastructure import model_store
    from detection.methods.rerank.neural import TrainingFailed

    request = TrainingRequest.from_job(job_params)
    kind, params = request.kind, request.params
    split = data.split
    root = model_store.models_dir()
    work = root / ".training" / f"job-{job_id}"
    work.mkdir(parents=True, exist_ok=True)
    try:
        targets = [(f"fold-{f}", f) for f in range(split.n_folds)] + ([("all", None)] if request.final_model else [])
        per_target, gold = _candidates(data, request.retriever, request.k, targets, log)
        trainer = {"feature-classifier": _train_feature, "cross-encoder": _train_cross,
                   "bi-encoder": _train_bi}[kind]
        shared: dict = {}
        records = []
        for i, (sub, fold) in enumerate(targets):
            cands = per_target[fold]
            y = cands.labels(gold)
            if not (y > 0).any() and kind != "bi-encoder":
                raise TrainingError("no gold pair among the retrieved candidates: nothing to learn from")
            cand_fold = np.asarray([split.query_fold[q] for q in cands.query_ids])[cands.qi]
            train_rows = np.nonzero(cand_fold != fold)[0] if fold is not None else np.arange(len(cands))
            train_queries = {q for q, f in split.query_fold.items() if f != fold}
            if not any(c > 0 for (q, _), c in gold.items() if q in train_queries):
                raise TrainingError(f"{sub}: the training folds hold no positive pair")

            def fold_progress(fraction, message="", i=i, sub=sub):
                progress((i + fraction) / len(targets), f"{sub}: {message}")

            record = trainer(work / sub, cands=cands, y=y, gold=gold, train_rows=train_rows,
                             train_queries=train_queries, test_rows=np.nonzero(cand_fold == fold)[0]
                             if fold is not None else None, reranker=request.reranker,
                             base_model=request.base_model, params=params, shared=shared, progress=fold_progress,
                             log=log)
            leaked = set(record.pop("training_queries")) & set(split.fold_queries(fold)) if fold is not None else set()
            if leaked:  # cannot happen by construction; refuse to register if it ever does
                raise TrainingError(f"{sub}: trained on {len(leaked)} held-out queries")
            record["metrics"]["first_stage"] = cands.meta.get("retriever_model") or request.retriever.name
            records.append({"sub": sub, "fold": fold, "train_folds": sorted({f for f in range(split.n_folds)
                                                                             if f != fold}), **record})
            log(f"{sub}: {record['metrics']}")
    except (TrainingError, TrainingFailed, ValueError, model_store.ModelUnavailable) as exc:
        shutil.rmtree(work, ignore_errors=True)  # a clear failure: nothing to resume, nothing registered
        raise TrainingError(str(exc)) from exc
    return _register(work, root, request, data.label, job_id, records)


def _register(work: Path, root: Path, request: TrainingRequest, label: str, job_id: int, records: list) -> dict:
    """The trained folder moved into place and one row per model, a feature classifier's with the configuration
    the job carried (validated when it was queued)."""
    from detection.models import TrainedModel

    kind, name, params = request.kind, request.name, request.params

    for leftover in work.glob("*/checkpoint-last"):
        shutil.rmtree(leftover, ignore_errors=True)
    final = root / name
    if final.exists():
        raise TrainingError(f"a model folder {name!r} appeared meanwhile; not overwriting it")
    os.replace(work, final)
    try:
        with transaction.atomic():
            owner = Job.objects.filter(pk=job_id).values_list("owner_id", flat=True).first()
            for r in records:
                TrainedModel.objects.create(
                    name=f"{name}/{r['sub']}", kind=kind, method=request.method, base_model=request.base_model,
                    config=request.reranker.to_json() if request.reranker is not None else None,
                    training_job_id=job_id, benchmark=label,
                    train_folds=r["train_folds"], held_out_fold=r["fold"], params=params,
                    files=sorted(str(p.relative_to(final / r["sub"])) for p in (final / r["sub"]).rglob("*")
                                 if p.is_file()),
                    metrics=json_safe(r["metrics"]), versions=r.get("versions", {}), seed=int(params.get("seed", 0) or 0),
                    owner_id=owner)
    except Exception:
        shutil.rmtree(final, ignore_errors=True)
        raise
    return {"name": name, "models": [f"{name}/{r['sub']}" for r in records],
            "metrics": json_safe({r["sub"]: r["metrics"] for r in records})}


def _train_feature(out: Path, *, cands, y, gold, train_rows, train_queries, test_rows, reranker, shared, progress,
                   log, **_):
    from detection.methods import registry
    from detection.methods.rerank.neural import versions

    config = reranker  # the job's MethodConfig, built as it was validated when the job was queued
    if "prepared" not in shared:  # the pool's statistics (no labels) and the first stage's signal names, once
        shared["prepared"] = registry.build_config(config).prepare(cands.source_texts)
    key = ("X", id(cands))  # one feature matrix per candidate set (one per fold for a first stage stored per fold)
    if key not in shared:
        progress(0.05, "features of every candidate")
        shared[key] = shared["prepared"].features(cands)
    X = shared[key]
    # the fold's reranker with the same featurizer and first-stage signals as the features it learns from
    rr = registry.build_config(config).prepared_like(shared["prepared"])
    progress(0.5, "training")
    rr.fit(cands.subset(train_rows), y[train_rows], gold={k: c for k, c in gold.items() if k[0] in train_queries},
           X=X[train_rows])
    rr.save(out)
    metrics = {"thresholds": {c: rr.thresholds[c]["threshold"] for c in ("cit.", "cf.")},
               "n_train_pairs": int(train_rows.size)}
    if test_rows is not None and test_rows.size:
        metrics.update(_held_out_mrr(cands, rr.predict_proba(cands.subset(test_rows), X=X[test_rows]), test_rows,
                                     gold))
    return {"metrics": metrics, "training_queries": rr.training_queries, "versions": versions(("numpy", "sklearn"))}


def _train_cross(out: Path, *, cands, y, gold, train_rows, train_queries, test_rows, base_model, params, progress,
                 log, **_):
    import json

    from detection.methods.infrastructure import model_store
    from detection.methods.rerank import cross_encoder as CE
    from detection.methods.rerank.thresholds import class_thresholds

    Q, C, Y = CE.training_pairs(cands, y, train_rows, gold, train_queries, params["neg_ratio"], params["seed"])
    log(f"{out.name}: {len(Y)} training pairs ({int((Y == 1).sum())} cit., {int((Y == 2).sum())} cf.)")
    summary = CE.train(base_model=model_store.resolve(base_model), queries=Q, candidates=C, labels=Y, out_dir=out,
                       options=CE.CrossEncoderOptions.from_params(params),
                       progress=lambda f, m="": progress(0.8 * f, m), log=log,
                       card={"base_model": base_model})
    tok, model, _ = CE.load(out, summary["device"])
    progress(0.85, "thresholds on the training pairs")
    probs = CE.predict_proba(tok, model, Q, C, max_length=params["max_length"], device=summary["device"])
    th = class_thresholds(probs, Y)
    metrics = {"thresholds": {c: th[c]["threshold"] for c in ("cit.", "cf.")}, "final_loss": summary["final_loss"],
               "pairs_per_s": summary["pairs_per_s"], "device": summary["device"], "steps": summary["steps"]}
    if test_rows is not None and test_rows.size:
        progress(0.9, "held-out fold")
        sub = cands.subset(test_rows)
        hp = CE.predict_proba(tok, model, [sub.query_texts[q] for q in sub.qi], [sub.source_texts[s] for s in sub.si],
                              max_length=params["max_length"], device=summary["device"])
        metrics.update(_held_out_mrr(cands, hp, test_rows, gold))
    (out / "reranker.json").write_text(json.dumps({"kind": "cross-encoder", "thresholds": th,
                                                   "training_queries": sorted(train_queries)}), encoding="utf-8")
    return {"metrics": metrics, "training_queries": train_queries, "versions": summary["versions"]}


def _train_bi(out: Path, *, cands, gold, train_queries, test_rows, base_model, params, progress, log, **_):
    from detection.methods.infrastructure import model_store
    from detection.methods.rerank import bi_encoder as BE

    base = model_store.resolve(base_model)
    s_index = {s: j for j, s in enumerate(cands.source_ids)}
    q_text = dict(zip(cands.query_ids, cands.query_texts))
    positives = [(q_text[q], s_index[s]) for (q, s), c in gold.items()
                 if c > 0 and q in train_queries and q in q_text and s in s_index]
    examples = BE.build_examples(positives, cands.source_texts, negatives=params["negatives"],
                                 neg_ratio=params["neg_ratio"], loss=params["loss"], seed=params["seed"],
                                 base_dir=base)
    log(f"{out.name}: {len(positives)} positives, {len(examples)} examples ({params['negatives']}, "
        f"1:{params['neg_ratio']}, {params['loss']})")
    summary = BE.train(base_model=base, examples=examples, out_dir=out, options=BE.BiEncoderOptions.from_params(params),
                       progress=lambda f, m="": progress(0.85 * f, m), log=log,
                       card={"base_model": base_model,  # the queries it saw: dense-encoder checks them per fold
                             "training_queries": sorted({q for (q, s), c in gold.items() if c > 0
                                                         and q in train_queries and q in q_text and s in s_index})})
    metrics = {"final_loss": summary["final_loss"], "pairs_per_s": summary["pairs_per_s"],
               "device": summary["device"], "steps": summary["steps"]}
    if test_rows is not None:
        progress(0.9, "held-out fold: dense retrieval over the version's sources")
        held = sorted({cands.query_ids[q] for q in cands.qi[test_rows]})
        model = BE.load(out, summary["device"])
        qe = BE.encode(model, [q_text[q] for q in held], prefix=BE.QUERY_PREFIX)
        se = BE.encode(model, cands.source_texts, prefix=BE.CANDIDATE_PREFIX)
        top = np.argsort(-(qe @ se.T), axis=1)[:, :10]
        rr = []
        for qid, row in zip(held, top):
            hit = next((i for i, j in enumerate(row, 1) if (qid, cands.source_ids[j]) in gold), None)
            rr.append(1.0 / hit if hit else 0.0)
        metrics["dense_mrr@10"] = float(np.mean(rr)) if rr else None
    return {"metrics": metrics, "training_queries": train_queries, "versions": summary["versions"]}
