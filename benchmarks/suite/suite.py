"""One benchmark suite: a list of methods over every registered benchmark, one table (no Django).

Benchmarks (:data:`BENCHMARKS`): ``loci-similes`` (the 545 Jerome/Lactantius → classical pairs, the file's five
``ref_type`` folds, against the cited sources or, with ``corpus_dir``, the whole source corpus) and
``lucan-vergil`` (Lucan BC 2–10 lines → Aeneid lines, 812 commentary pairs; five folds by book, ``(book − 2) mod
5``). Each becomes a :class:`SuiteBenchmark`: queries (the gold queries: every measure is per query over them),
the source pool, typed gold ``{query: {source: 1 cit. | 2 cf.}}`` (verse gold is untyped: class 1) and folds.

A stored benchmark version (``stored:NAME@VERSION``, e.g. gold a user promoted from verified workbench
parallels) becomes one through :func:`from_loci_benchmark`; the Django side reads it from the database
(``benchmarks.services.suite_jobs.stored_suite_benchmark``) and hands it in, as a loader of :func:`run_suite`'s
benchmarks like the two above.

Method strings:

- ``NAME``: a registered retriever (``bm25-lemma``, ``tesserae``…), fitted on the pool (no labels);
- ``file:FORMAT:PATH``: another tool's run read from a file (TREC, Tesserae CSV/XML, ``locisimiles``, passim),
  scored on the benchmarks whose ids it names (the others skip it and say so);
- ``rrf:A+B``: reciprocal-rank fusion of retrievers A and B (score Σ 1 / (60 + rank));
- ``FIRST>RERANKER``: the reranker over FIRST's top ``rerank_depth`` (100; the first stage's ranks follow it to
  ``depth``, 1000), **within** the benchmark: fold f's model trains on the
  other folds' queries (their candidates and gold) and ranks fold f's;
- ``FIRST>RERANKER@lobo``: **leave one benchmark out**: trained on every other benchmark's queries (all folds),
  applied to this one. ``FIRST>RERANKER(key=value,...)`` passes the reranker parameters (validated by the
  registry, e.g. ``feature-ltr(query_norm=true)``). The featurizer's corpus statistics are refitted on the test pool (no labels), as a
  stored model's would be on new texts.

Reranked lists are the top ``k`` reordered by P(reference); measures come from :mod:`.measures` (checked
against ``ir-measures``), per query then mean; the fold spread is the standard deviation of the fold means;
every method is compared with the first method of the list with a paired randomisation test and a paired
t-test over the gold queries (MRR@10 and R@10). Every reranked row carries the queries its models trained on
and a leak count (held-out queries among them), which must be 0.
"""
from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from detection.channels.channel_features import SIGNALS as CHANNEL_SIGNALS  # noqa: F401 (the suite's name)

from . import measures as MS

TABLE_MEASURES = ("R@1", "R@10", "R@100", "R@1000", "RR@10", "nDCG@10")
GLOBAL_NS = (1_000, 10_000)
RRF_K = 60
SEARCH_DEPTH = 1000  # one search per retriever and benchmark serves every cut-off up to it


@dataclass
class SuiteBenchmark:
    name: str
    query_ids: list[str]
    query_texts: list[str]
    source_ids: list[str]
    source_texts: list[str]
    gold: dict[str, dict[str, int]]
    folds: dict[str, int]
    pool: str = ""
    typed: bool = True
    notes: list[str] = field(default_factory=list)
    # the kind of text of the queries (``verse``/``prose``): a first stage with a per-text-type ``profile``
    # (``channels``) runs with this one
    text_type: str = "prose"
    # verse: every query-side line in the poem's order and the position of each query among them, so a first
    # stage that reads neighbouring lines (``channels``' context term) reads the true neighbours
    lines: list[str] | None = None
    line_index: list[int] | None = None

    @property
    def n_folds(self) -> int:
        return max(self.folds.values()) + 1 if self.folds else 0

    def describe(self) -> dict:
        return {"name": self.name, "queries": len(self.query_ids), "sources": len(self.source_ids),
                "gold_pairs": sum(len(v) for v in self.gold.values()), "folds": self.n_folds, "pool": self.pool,
                "typed": self.typed, "text_type": self.text_type, "notes": self.notes}


GOLD_CLASSES = {"cit.": 1, "cf.": 2, "link": 1}  # any other label counts as a reference of class 1


def from_loci_benchmark(name: str, bench, split, pool_ids: list[str], pool: str, notes=()) -> SuiteBenchmark:
    """A :class:`SuiteBenchmark` of a ``benchmarks.loci.data.Benchmark`` (the Loci Similes files, or a stored
    version such as gold a user promoted from workbench verdicts): the split's citing queries, ``pool_ids`` as
    the sources, typed gold (``cit.`` 1, ``cf.`` 2)."""
    stext = {s.seg_id: s.text for s in bench.sources}
    qtext = {s.seg_id: s.text for s in bench.queries}
    gold: dict[str, dict[str, int]] = {}
    for g in bench.gold:
        gold.setdefault(g.query_id, {})[g.source_id] = GOLD_CLASSES.get(g.label, 1)
    qids = [q for q in bench.citing_query_ids() if q in split.query_fold]
    return SuiteBenchmark(name, qids, [qtext[q] for q in qids], pool_ids, [stext[s] for s in pool_ids],
                          {q: gold[q] for q in qids}, {q: split.query_fold[q] for q in qids}, pool,
                          typed=any(c == 2 for g in gold.values() for c in g.values()),
                          notes=list(split.notes) + list(notes))


def loci_benchmark(corpus_dir=None, data_dir=None) -> SuiteBenchmark:
    from benchmarks.loci import data, matching, splits
    from benchmarks.loci.evaluate import source_pool

    bench = data.load_default_545(data_dir)
    if corpus_dir:
        qc, sc = data.read_corpus_dir(corpus_dir)
        bench, _ = matching.attach_corpus(bench, qc, sc)
    split = splits.split_from_file(bench, "ref_type")
    pool_ids, pool = source_pool(bench, "corpus" if corpus_dir else "gold")
    return from_loci_benchmark("loci-similes", bench, split, pool_ids, pool)


def lucan_benchmark(data_dir=None) -> SuiteBenchmark:
    from benchmarks.verse.lucan_vergil import load_lucan_vergil

    vb = load_lucan_vergil(data_dir)
    qtext: dict[str, str] = {}
    repeated = []
    for q, t in zip(vb.query_ids, vb.query_texts):  # the .tess numbers 7 lines twice (luc. 5.595, 7.865-869, 9.410)
        if q in qtext:
            repeated.append(q)
        else:
            qtext[q] = t
    qids = [q for q in qtext if q in vb.gold]
    folds = {q: (int(q.rsplit(" ", 1)[-1].split(".")[0]) - 2) % 5 for q in qids}
    line_pos = {q: i for i, q in enumerate(qtext)}
    return SuiteBenchmark("lucan-vergil", qids, [qtext[q] for q in qids], list(vb.source_ids),
                          list(vb.source_texts), {q: dict.fromkeys(vb.gold[q], 1) for q in qids}, folds,
                          "aeneid", typed=False,
                          notes=["strict line-to-line gold (tolerance 0); docs/verse_detection.md also reports ±2 lines",
                                 f"line ids numbered twice in the text, first line kept: {', '.join(repeated)}"],
                          text_type="verse", lines=list(qtext.values()), line_index=[line_pos[q] for q in qids])


BENCHMARKS: dict[str, Callable[..., SuiteBenchmark]] = {"loci-similes": loci_benchmark,
                                                        "lucan-vergil": lucan_benchmark}


# ------------------------------------------------------------------------------------------------ first stage
@dataclass
class Ranked:
    """A method's result on one benchmark: per query (source, score) best first, and training notes."""

    ranked: dict[str, list[tuple[str, float]]]
    training: dict = field(default_factory=dict)
    seconds: float = 0.0

    def order(self) -> dict[str, list[str]]:
        return {q: [s for s, _ in v] for q, v in self.ranked.items()}


_WITH_PARAMS = re.compile(r"^(?P<name>[^()]+?)\s*(?:\((?P<params>[^()]*)\))?$")


def _key_values(spec: str, text: str | None, what: str) -> dict[str, str]:
    """``key=value,...`` of a method string's parentheses as text (validated later by the registry)."""
    params = {}
    for item in filter(None, (i.strip() for i in (text or "").split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"method {spec!r}: {what} parameter {item!r} is not key=value")
        params[key.strip()] = value.strip()
    return params


def split_first(first: str) -> tuple[str, dict[str, str]]:
    """A first stage as written in a method string, ``NAME`` or ``NAME(key=value,...)``, as (name, its
    parameters as text). ``channels(profile=prose)`` fixes the profile on every benchmark (without it, each
    benchmark's text type picks it: :func:`first_stage_params`)."""
    m = _WITH_PARAMS.match(first.strip())
    if not m:
        raise ValueError(f"first stage {first.strip()!r}: write NAME or NAME(key=value,...)")
    return m["name"].strip(), _key_values(first.strip(), m["params"], "first stage")


def first_stage_params(bench: SuiteBenchmark, first: str) -> dict:
    """The parameters a first stage runs with on ``bench``: those written in its string
    (``channels(profile=prose)``), and a ``profile`` it declares but was not given is the benchmark's text type
    (``channels``: verse or prose weights); the rest its defaults."""
    from detection.methods import registry

    name, given = split_first(first)
    declared = {p.name for p in registry.get_spec(name).params}
    return {**({"profile": bench.text_type} if "profile" in declared and "profile" not in given else {}), **given}


def _neighbour_runs(bench: SuiteBenchmark) -> tuple[list[str], list[int]]:
    """The query lines with one line either side, as runs of consecutive lines separated by an empty text, and
    the row of each query among them (``pipeline.neighbour_runs``)."""
    from detection.methods.rerank.pipeline import neighbour_runs

    return neighbour_runs(bench.lines, bench.line_index)


def retrieve(bench: SuiteBenchmark, name: str, k: int, cache: dict, *, signals: bool = False):
    """(nq, k) indices into the pool and scores of retriever ``name`` (a first stage as written, with its
    parameters when given: :func:`split_first`; cached per benchmark and that string), and with
    ``signals`` the first stage's per-candidate signals (nq, k, m) and their names (``channels``: each
    channel's score; none for other retrievers)."""
    params = first_stage_params(bench, name)
    key = (bench.name, split_first(name)[0], tuple(sorted(params.items())))  # channels(profile=verse) on verse
    if key not in cache or cache[key][0].shape[1] < min(k, len(bench.source_ids)):
        from benchmarks.loci.method_adapters import EngineRetrieverMethod

        m = EngineRetrieverMethod(split_first(name)[0], **params)
        m.fit(bench.source_ids, bench.source_texts)
        # the first stage's signals (channels': each channel's score) by the one path training, detect and the
        # detection job use; verse queries are searched with their true neighbouring lines
        cache[key] = m.search_signals(bench.query_ids, bench.query_texts, max(k, SEARCH_DEPTH), lines=bench.lines,
                                      line_index=bench.line_index)
    idx, sc, sig, names = cache[key]
    if not signals:
        return idx[:, :k], sc[:, :k]
    return idx[:, :k], sc[:, :k], (None if sig is None else sig[:, :k]), names


def _as_ranked(bench: SuiteBenchmark, idx, sc) -> dict[str, list[tuple[str, float]]]:
    return {q: [(bench.source_ids[j], float(s)) for j, s in zip(idx[i], sc[i]) if j >= 0]
            for i, q in enumerate(bench.query_ids)}


def rrf(bench: SuiteBenchmark, names: Sequence[str], k: int, cache: dict) -> dict[str, list[tuple[str, float]]]:
    fused: dict[str, dict[str, float]] = {q: {} for q in bench.query_ids}
    for name in names:
        idx, _ = retrieve(bench, name, k, cache)
        for i, q in enumerate(bench.query_ids):
            for r, j in enumerate(idx[i]):
                if j >= 0:
                    s = bench.source_ids[j]
                    fused[q][s] = fused[q].get(s, 0.0) + 1.0 / (RRF_K + r + 1)
    return {q: sorted(d.items(), key=lambda t: (-t[1], t[0]))[:k] for q, d in fused.items()}


# ------------------------------------------------------------------------------------------------ reranking
def candidates(bench: SuiteBenchmark, first: str, depth: int, cache: dict):
    from detection.methods.rerank import pipeline as P

    idx, sc, sig, names = retrieve(bench, first, depth, cache, signals=True)
    return P.from_topk(bench.query_ids, bench.query_texts, bench.source_ids, bench.source_texts, idx, sc,
                       {"retriever": split_first(first)[0], "retriever_params": first_stage_params(bench, first)},
                       sig, names)


def labels_of(bench: SuiteBenchmark, cands) -> np.ndarray:
    return np.asarray([bench.gold.get(cands.query_ids[q], {}).get(cands.source_ids[s], 0)
                       for q, s in zip(cands.qi, cands.si)], np.int64)


def _rows_of(cands, queries: set[str]) -> np.ndarray:
    return np.flatnonzero(np.asarray([cands.query_ids[q] in queries for q in cands.qi], bool))


def _reranked(cands, probs) -> dict[str, list[tuple[str, float]]]:
    """Each query's candidates by P(no match), lower first (the same order as 1 − P(no match) without the
    rounding that makes near-certain pairs tie), ties by first-stage rank; the score written is 1 − P(no match)."""
    out: dict[str, list[tuple[str, float, int]]] = {}
    for q, s, p0, r in zip(cands.qi, cands.si, probs[:, 0], cands.rank):
        out.setdefault(cands.query_ids[q], []).append((cands.source_ids[s], float(p0), int(r)))
    return {q: [(s, 1.0 - p0) for s, p0, _ in sorted(v, key=lambda t: (t[1], t[2]))] for q, v in out.items()}


def build_reranker(reranker, params: dict | None = None):
    """A fresh reranker: from its configuration (a :class:`SuiteMethod`'s, built as it is), or from a name and
    ``params`` configured here."""
    from detection.methods import registry

    config = reranker if isinstance(reranker, registry.MethodConfig) else \
        registry.configure(reranker, dict(params or {}), kind="reranker")
    return registry.build_config(config)


def _reranker_name(reranker) -> str:
    return reranker if isinstance(reranker, str) else reranker.name


def rerank_within(bench: SuiteBenchmark, first: str, reranker, depth: int, cache: dict,
                  params: dict | None = None, progress=None) -> Ranked:
    cands = candidates(bench, first, depth, cache)
    y = labels_of(bench, cands)
    out: dict[str, list[tuple[str, float]]] = {}
    folds, leaks = [], 0
    # the pool's statistics use no label, so one fit and one feature matrix serve every fold
    proto = build_reranker(reranker, params).prepare(bench.source_texts)
    X = proto.features(cands) if callable(getattr(proto, "prepared_like", None)) else None
    for f in range(bench.n_folds):
        held = {q for q, ff in bench.folds.items() if ff == f}
        tr, te = _rows_of(cands, set(bench.query_ids) - held), _rows_of(cands, held)
        rr = build_reranker(reranker, params)
        rr = rr.prepared_like(proto) if X is not None else rr.prepare(bench.source_texts)
        rr.fit(cands.subset(tr), y[tr], X=None if X is None else X[tr])
        leaks += len(set(rr.training_queries) & held)
        out.update(_reranked(cands.subset(te), rr.predict_proba(cands.subset(te), X=None if X is None else X[te])))
        folds.append({"fold": f, "trained_on_queries": len(rr.training_queries), "held_out": len(held)})
        if progress:
            progress(f"{bench.name} {first}>{_reranker_name(reranker)}: fold {f} done")
    return Ranked(out, {"mode": "within", "benchmark": bench.name, "folds": folds, "leaked_queries": leaks})


def train_on(benches: Sequence[SuiteBenchmark], first: str, reranker, depth: int, cache: dict,
             params: dict | None = None):
    """One reranker trained on every query of ``benches`` (their candidates stacked; each benchmark's features
    with its own pool's statistics). Returns (reranker, model card)."""
    rr = build_reranker(reranker, params)
    Xs, ys, groups, orders, card = [], [], [], [], []
    offset = 0
    for b in benches:
        c = candidates(b, first, depth, cache)
        rr.prepare(b.source_texts)
        Xs.append(rr.features(c))
        ys.append(labels_of(b, c))
        groups.append(c.qi + offset)
        orders.append(c.rank)
        offset += len(c.query_ids)
        card.append({"benchmark": b.name, "queries": len(b.query_ids), "pool": b.pool,
                     "first_stage_config": c.meta.get("retriever_params", {}),
                     "positives": int((ys[-1] > 0).sum()), "candidates": len(c)})
    rr.fit_features(np.vstack(Xs), np.concatenate(ys), np.concatenate(groups), np.concatenate(orders),
                    queries={q for b in benches for q in b.query_ids}, first_stage=split_first(first)[0],
                    first_stage_config={b["benchmark"]: b["first_stage_config"] for b in card})
    return rr, {"first_stage": first, "depth": depth, "reranker": _reranker_name(reranker), "trained_on": card,
                "features": rr.feature_names,
                "training_query_ids": {b.name: list(b.query_ids) for b in benches}}


def rerank_transfer(test: SuiteBenchmark, train: Sequence[SuiteBenchmark], first: str, reranker, depth: int,
                    cache: dict, params: dict | None = None) -> Ranked:
    rr, card = train_on(train, first, reranker, depth, cache, params)
    leaks = len(set(test.query_ids) & {q for b in train for q in b.query_ids})
    cands = candidates(test, first, depth, cache)
    rr.prepare(test.source_texts)
    out = _reranked(cands, rr.predict_proba(cands))
    card = {k: v for k, v in card.items() if k != "training_query_ids"}
    return Ranked(out, {"mode": "leave-one-benchmark-out", "held_out": test.name, **card, "leaked_queries": leaks})


# ------------------------------------------------------------------------------------------------ the suite
_RERANKED = re.compile(r"^(?P<first>[^>]+)>(?P<name>[\w.-]+)(?:\((?P<params>[^)]*)\))?(?P<lobo>@lobo)?$")


def split_methods(text: str) -> list[str]:
    """A comma-separated method list, commas inside a reranker's parentheses kept
    (``bm25-lemma,channels>feature-ltr(anchor=true,C=0.01)@lobo`` is two methods)."""
    out, depth, cur = [], 0, []
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return [m for m in out if m]


def parse_reranked(spec: str) -> tuple[str, str, dict, bool]:
    """``FIRST>RERANKER(key=value,...)@lobo`` → (first stage, reranker, its parameters as text, leave-one-out)."""
    m = _RERANKED.match(spec)
    if not m:
        raise ValueError(f"method {spec!r}: write FIRST>RERANKER, FIRST>RERANKER(key=value,...) or add @lobo")
    return m["first"].strip(), m["name"], _key_values(spec, m["params"], "reranker"), bool(m["lobo"])


MODES = ("retriever", "rrf", "rerank", "file")


@dataclass(frozen=True)
class SuiteMethod:
    """One row of the suite, configured once (:func:`configure_method`): ``display`` is its method string (the
    table's row name, as typed), ``mode`` one of :data:`MODES`, ``firsts`` the first stage's configurations (one
    retriever, or an ``rrf:`` fusion's parts; ``registry.MethodConfig``), ``reranker`` the reranker's and
    ``lobo`` leave one benchmark out. A job carries :meth:`to_json`; its worker reads it back with
    :meth:`from_json` (each configuration's digest checked by ``registry.carried_config``, not validated again)."""

    display: str
    mode: str
    firsts: tuple = ()
    reranker: object = None
    lobo: bool = False

    @property
    def first_stages(self) -> tuple[str, ...]:
        """Each first stage as the method string writes it (``channels`` or ``channels(profile=prose)``): what
        :func:`retrieve` runs. Its parameters were validated with the row (``firsts``), and ``from_json`` holds the
        string to the names of the configurations it carries."""
        return _parts(self.display)[1]

    @property
    def first(self) -> str:
        """The first stage as written (a reranked row's, a plain row's): :attr:`first_stages`' first."""
        return self.first_stages[0]

    def to_json(self) -> dict:
        if self.mode == "file":
            raise ValueError(f"method {self.display!r}: another tool's file is read on the command line, never "
                             "carried by a job")
        return {"display": self.display, "mode": self.mode, "first": [c.to_json() for c in self.firsts],
                "reranker": None if self.reranker is None else self.reranker.to_json(), "lobo": self.lobo}

    @classmethod
    def from_json(cls, data) -> SuiteMethod:
        """What :meth:`to_json` wrote, as a worker reads it."""
        from detection.methods import registry

        keys = {"display", "mode", "first", "reranker", "lobo"}
        if not isinstance(data, dict) or set(data) != keys or data["mode"] not in MODES[:3] \
                or not isinstance(data["first"], list) or not isinstance(data["display"], str):
            raise registry.ParamError(f"a suite job's method must be a JSON object with {', '.join(sorted(keys))} "
                                      f"and a mode among {', '.join(MODES[:3])}: queue the job again")
        firsts = tuple(registry.carried_config(c, kind="retriever") for c in data["first"])
        reranker = None if data["reranker"] is None else registry.carried_config(data["reranker"], kind="reranker")
        method = cls(data["display"], data["mode"], firsts, reranker, bool(data["lobo"]))
        if _names(method.display) != _names(method) or not _written_as_carried(method):
            raise registry.ParamError(f"the suite job's method {_short_text(method.display)} does not name the "
                                      "configurations it carries: queue the job again")
        return method


def _written_as_carried(method: SuiteMethod) -> bool:
    """Each first-stage parameter the method string writes (what :func:`retrieve` runs) has the value of the
    configuration the job carries."""
    from detection.methods import registry

    for text, config in zip(method.first_stages, method.firsts):
        declared = {p.name: p for p in registry.get_spec(config.name).params}
        for key, value in split_first(text)[1].items():
            try:
                if key not in declared or declared[key].coerce(value) != config.params.get(key):
                    return False
            except registry.ParamError:
                return False
    return True


def _short_text(text: str, n: int = 60) -> str:
    return repr(text if len(text) <= n else text[:n] + "…")


def _parts(spec: str) -> tuple[str, tuple[str, ...], str | None, dict, bool]:
    """(mode, first-stage names, reranker name, its parameters as text, leave-one-out) of a method string
    (parsing only: nothing is validated here)."""
    if spec.startswith("file:"):
        return ("file", (), None, {}, False)
    head = spec.partition(">")[0]
    fused = head.startswith("rrf:")
    firsts = tuple(head[4:].split("+")) if fused else (head,)
    if ">" not in spec:
        return ("rrf" if fused else "retriever", firsts, None, {}, False)
    _, name, params, lobo = parse_reranked(spec)
    if fused:
        raise ValueError("a reranker's first stage is one retriever, not a fusion")
    return ("rerank", firsts, name, params, lobo)


def _names(method: str | SuiteMethod) -> tuple:
    """(mode, first-stage names, reranker name, leave-one-out) of a method string or a configured row."""
    if isinstance(method, SuiteMethod):
        return (method.mode, tuple(c.name for c in method.firsts),
                None if method.reranker is None else method.reranker.name, method.lobo)
    mode, firsts, reranker, _, lobo = _parts(method)
    return (mode, tuple(split_first(f)[0] for f in firsts), reranker, lobo)


def configure_method(spec: str) -> SuiteMethod:
    """A method string configured once: each retriever and the reranker through ``registry.configure`` (the
    reranker with its ``(key=value,...)`` parameters), a file's format checked. ``UnknownMethod``/``ParamError``
    name the part; a malformed string raises ``ValueError``."""
    from detection.methods import registry

    spec = spec.strip()
    mode, firsts, reranker, params, lobo = _parts(spec)
    if mode == "file":
        from .interchange import READERS

        fmt = spec.split(":")[1] if spec.count(":") >= 2 else ""
        if fmt not in READERS:
            raise ValueError(f"write file:FORMAT:PATH with FORMAT one of {', '.join(READERS)}")
        return SuiteMethod(spec, "file")

    def config(name, kind, values=None):
        return registry.configure(name, values or {}, kind=kind)

    firsts = tuple(split_first(f) for f in firsts)  # (name, its parameters as written), each validated here
    return SuiteMethod(spec, mode, tuple(config(name, "retriever", given) for name, given in firsts),
                       None if reranker is None else config(reranker, "reranker", params), lobo)


def _with_tail(bench: SuiteBenchmark, res: Ranked, first: str, depth: int, cache: dict) -> Ranked:
    """The reranked top of each query followed by the first stage's ranks below it (scores below every reranked
    one), so R@1000 of a reranked row is the first stage's."""
    idx, sc = retrieve(bench, first, depth, cache)
    for i, q in enumerate(bench.query_ids):
        top = res.ranked.get(q, [])
        seen = {s for s, _ in top}
        floor = min((p for _, p in top), default=0.0) - 1.0
        tail = [(bench.source_ids[j], floor - r) for r, j in enumerate(idx[i]) if j >= 0
                and bench.source_ids[j] not in seen]
        res.ranked[q] = list(top) + tail
    return res


def imported(spec: str, bench: SuiteBenchmark) -> Ranked:
    """``file:FORMAT:PATH``: another tool's results (:mod:`.interchange` formats) mapped onto the benchmark; the
    import report (rows, unmatched ids counted and listed) travels with the row. The path is the operator's
    (command line), never a request's."""
    from pathlib import Path

    from .interchange import InterchangeError, read_run, to_benchmark

    _, fmt, path = spec.split(":", 2)
    try:
        imp = to_benchmark(read_run(fmt, Path(path).read_text(encoding="utf-8")), bench.query_ids, bench.source_ids)
    except InterchangeError as exc:  # file:line, for the command's one-line error
        raise InterchangeError(exc.line, exc.message, Path(path).name) from None
    return Ranked(imp.ranked, {"mode": "import", "format": fmt, "file": Path(path).name, **imp.report()})


def export(report_dir, bench: SuiteBenchmark, runs: dict[str, Ranked]) -> list[str]:
    """TREC qrels (all, and per class when typed) and a BEIR folder for the benchmark and each of its folds, and
    every method's run as a TREC run (``runs/<method>.trec``; ``>``, ``:`` and ``+`` in names become ``_``)."""
    from pathlib import Path

    from .interchange import qrels_text, trec_run_text, write_beir

    d = Path(report_dir) / bench.name
    (d / "runs").mkdir(parents=True, exist_ok=True)
    files = []
    views = ("all", "cit.", "cf.") if bench.typed else ("all",)
    for v in views:
        name = "qrels.txt" if v == "all" else f"qrels-{v.rstrip('.')}.txt"
        (d / name).write_text(qrels_text(bench.gold, v), encoding="utf-8")
        files.append(name)
    texts = dict(zip(bench.query_ids, bench.query_texts))
    for f in [None, *range(bench.n_folds)]:
        qs = [q for q in bench.query_ids if f is None or bench.folds[q] == f]
        sub = "beir" if f is None else f"beir-fold-{f}"
        write_beir(d / sub, query_ids=qs, query_texts=[texts[q] for q in qs], source_ids=bench.source_ids,
                   source_texts=bench.source_texts, gold=bench.gold)
        if f is not None:
            (d / f"qrels-fold-{f}.txt").write_text(qrels_text({q: bench.gold[q] for q in qs}), encoding="utf-8")
            files.append(f"qrels-fold-{f}.txt")
        files.append(sub + "/")
    for spec, res in runs.items():
        tag = re.sub(r"[^\w.-]+", "_", spec)
        (d / "runs" / f"{tag}.trec").write_text(trec_run_text(res.ranked, tag), encoding="utf-8")
        files.append(f"runs/{tag}.trec")
    return [f"{bench.name}/{f}" for f in files]


def run_method(spec: str | SuiteMethod, bench: SuiteBenchmark, all_benches: dict[str, SuiteBenchmark], depth: int,
               cache: dict, progress=None, rerank_depth: int = 100) -> Ranked:
    """One row on one benchmark; ``spec`` a configured :class:`SuiteMethod` (a method string is configured
    here first)."""
    m = spec if isinstance(spec, SuiteMethod) else configure_method(spec)
    t = time.perf_counter()
    if m.mode == "rerank":
        if m.lobo:
            others = [b for n, b in all_benches.items() if n != bench.name]
            if not others:
                raise ValueError(f"{m.display}: leave-one-benchmark-out needs a second benchmark")
            res = rerank_transfer(bench, others, m.first, m.reranker, rerank_depth, cache)
        else:
            res = rerank_within(bench, m.first, m.reranker, rerank_depth, cache, progress=progress)
        res = _with_tail(bench, res, m.first, depth, cache)
    elif m.mode == "file":
        res = imported(m.display, bench)
    elif m.mode == "rrf":
        res = Ranked(rrf(bench, list(m.first_stages), depth, cache))
    else:
        idx, sc = retrieve(bench, m.first, depth, cache)
        res = Ranked(_as_ranked(bench, idx, sc))
    res.seconds = time.perf_counter() - t
    return res


def score(bench: SuiteBenchmark, res: Ranked) -> dict:
    order = res.order()
    views = ("all", "cit.", "cf.") if bench.typed else ("all",)
    pq = {v: MS.per_query(order, bench.gold, TABLE_MEASURES, v) for v in views}
    row = {"n_queries": len(pq["all"]["RR@10"]),
           "mean": {m: MS.mean(pq["all"][m]) for m in TABLE_MEASURES},
           "by_class": {v: {m: MS.mean(pq[v][m]) for m in ("R@10", "RR@10")} for v in views if v != "all"},
           "global_recall": {str(n): MS.global_recall(res.ranked, bench.gold, n) for n in GLOBAL_NS}}
    spread = {}
    for m in ("R@10", "RR@10", "nDCG@10"):
        per_fold = [MS.mean({q: v for q, v in pq["all"][m].items() if bench.folds.get(q) == f})
                    for f in range(bench.n_folds)]
        per_fold = [x for x in per_fold if not math.isnan(x)]
        spread[m] = float(np.std(per_fold, ddof=1)) if len(per_fold) > 1 else None
    row["fold_std"] = spread
    row["per_query"] = {m: pq["all"][m] for m in ("R@10", "RR@10")}
    row["training"] = res.training
    row["seconds"] = res.seconds
    return row


def run_suite(methods: Sequence[str | SuiteMethod], benchmarks: dict[str, SuiteBenchmark], *, depth: int = 1000,
              rerank_depth: int = 100, n_resamples: int = 10_000, progress=None, export_dir=None) -> dict:
    """Every method on every benchmark; returns the report (``rows`` per benchmark and method string, paired
    tests against the first method). ``methods``: configured :class:`SuiteMethod` rows (a job's, the command's),
    or method strings configured here once."""
    if not methods:
        raise ValueError("no method given")
    configured = {}
    for m in methods:
        m = m if isinstance(m, SuiteMethod) else configure_method(m)
        configured[m.display] = m
    methods = list(configured)
    cache: dict = {}
    report = {"schema": "similia.suite/1", "methods": list(methods), "depth": depth, "rerank_depth": rerank_depth,
              "benchmarks": {n: b.describe() for n, b in benchmarks.items()}, "rows": {}}
    for name, bench in benchmarks.items():
        rows, runs = {}, {}
        for spec in methods:
            if progress:
                progress(f"{name}: {spec}")
            try:
                runs[spec] = run_method(configured[spec], bench, benchmarks, depth, cache, progress, rerank_depth)
            except ValueError as exc:
                if not spec.startswith("file:") or "no row names" not in str(exc):
                    raise
                report.setdefault("skipped", []).append(f"{name}: {spec}: {exc}")  # another benchmark's file
                continue
            rows[spec] = score(bench, runs[spec])
        if export_dir:
            report.setdefault("exported", []).extend(export(export_dir, bench, runs))
        base = methods[0]
        unsupervised = [m for m in methods if m in rows and configured[m].mode in ("retriever", "rrf")]
        for spec in [m for m in methods[1:] if m in rows]:
            rows[spec]["vs_first"] = {m: MS.compare(rows[spec]["per_query"][m], rows[base]["per_query"][m],
                                                    n_resamples=n_resamples)
                                      for m in ("RR@10", "R@10")}
            # a reranked row also against every unsupervised row (the first stage it reranks, the fusions)
            if ">" in spec:
                rows[spec]["vs"] = {b: {m: MS.compare(rows[spec]["per_query"][m], rows[b]["per_query"][m],
                                                      n_resamples=n_resamples) for m in ("RR@10", "R@10")}
                                    for b in unsupervised if b != base}
        report["rows"][name] = rows
    return report


def _delta(vs: dict | None) -> str:
    return f"{vs['delta']:+.3f} ({vs['p_randomization']:.4f} / {vs['p_ttest']:.2g})" if vs else "–"


def markdown(report: dict) -> str:
    """The suite's one table (per benchmark, per method) in Markdown."""
    head = ("| benchmark | method | R@1 | R@10 | R@100 | R@1000 | MRR@10 | nDCG@10 | fold sd MRR@10 | "
            "global R@1000 pairs | cit. / cf. R@10 | Δ MRR@10 vs first (p rand. / t) | Δ R@10 vs first (p rand. / t) |")
    out = [head, "|" + "---|" * 13]
    for bname, rows in report["rows"].items():
        for spec, r in rows.items():
            m = r["mean"]
            bc = r["by_class"]
            cls = " / ".join(f"{bc[v]['R@10']:.3f}" for v in ("cit.", "cf.")) if bc else "–"
            cmp = " | ".join(_delta(r.get("vs_first", {}).get(m)) for m in ("RR@10", "R@10"))
            sd = r["fold_std"]["RR@10"]
            out.append(f"| {bname} | {spec} | {m['R@1']:.3f} | {m['R@10']:.3f} | {m['R@100']:.3f} | "
                       f"{m['R@1000']:.3f} | {m['RR@10']:.3f} | {m['nDCG@10']:.3f} | "
                       f"{'–' if sd is None else f'{sd:.3f}'} | {r['global_recall']['1000']:.3f} | {cls} | {cmp} |")
    return "\n".join(out) + "\n"
