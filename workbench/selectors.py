"""Reads of the workbench. Listing candidates costs a fixed number of queries whatever the page or run size:
one count, one page of rows with both segments joined, one for the page's verdicts."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Exists, Max, OuterRef, Q, QuerySet

from benchmarks.models import Corpus, EvaluationRun
from benchmarks.selectors import runs_visible_to
from core.errors import DomainError
from workbench.models import Candidate, DetectionRun, Document, DocumentSegment, Verdict

PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
VERDICT_FILTERS = ("unverified", "cit.", "cf.", "rejected", "unsure")
#: the explorer's orders. "score": the whole run best first; equal scores keep the query order, then the rank
#: within the query, then the row id (the order the candidates were stored in), so a page never reshuffles.
#: "refit": the same after re-ranking with the owner's verdicts (an earlier version set every candidate's
#: score; before, none has one and this is the query order), on its own index like "score".
ORDERS = {"query": ("query_position", "rank", "id"), "score": ("-score", "query_position", "rank", "id"),
          "refit": ("-refit_score", "query_position", "rank", "id")}


def document_list(*, user) -> QuerySet[Document]:
    """The user's uploads and the shared copies of stored corpora (staff: every document)."""
    qs = Document.objects.select_related("owner", "corpus")
    return qs if user.is_staff else qs.filter(Q(owner=user) | Q(corpus__isnull=False))


def document_rows(pk: int) -> list[tuple[str, str]]:
    """``(seg_id, text)`` of a document's segments in order (what a detection reads)."""
    return list(DocumentSegment.objects.filter(document=pk).order_by("position").values_list("seg_id", "text"))


def document_count(pk: int) -> int:
    return DocumentSegment.objects.filter(document=pk).count()


def document_fingerprint(pk: int) -> tuple:
    """Changes whenever the document's segments do: id, creation time, segment count, last segment id."""
    row = Document.objects.filter(pk=pk).annotate(n=Count("segments"), last=Max("segments__id")).values_list(
        "created", "n", "last").first()
    return ("document", pk, *(row or ()))


def corpus_list() -> QuerySet[Corpus]:
    return Corpus.objects.annotate(n_segments=Count("segments")).order_by("name", "side")


def run_list(*, user) -> QuerySet[DetectionRun]:
    """Detection runs the user may see: their own (staff: all)."""
    qs = DetectionRun.objects.select_related("job", "refit_job", "owner", "query_document", "source_document")
    return qs if user.is_staff else qs.filter(owner=user)


@dataclass
class CandidateFilters:
    label: str | None = None  # "cit.", "cf.", "none"
    min_score: float | None = None
    min_prob: float | None = None  # P(cit.) or P(cf.) at least this
    author_pair: str | None = None  # "query author → source author"
    bucket: str | None = None
    q: str | None = None  # text or citation id, either side
    verdict: str | None = None  # VERDICT_FILTERS, for the requesting user
    order: str = "query"  # ORDERS


def candidates(*, run: DetectionRun, filters: CandidateFilters | None = None, user=None) -> QuerySet[Candidate]:
    """The run's candidates, filtered, in query order then rank or (``order="score"``) best score first over the
    whole run (ties: see `ORDERS`)."""
    f = filters or CandidateFilters()
    qs = Candidate.objects.filter(run=run)
    if f.label:
        qs = qs.filter(label="" if f.label == "none" else f.label)
    if f.min_score is not None:
        qs = qs.filter(score__gte=f.min_score)
    if f.min_prob is not None:
        qs = qs.filter(Q(p_cit__gte=f.min_prob) | Q(p_cf__gte=f.min_prob))
    if f.bucket:
        qs = qs.filter(bucket=f.bucket)
    if f.author_pair:
        q_author, _, s_author = f.author_pair.partition(" → ")
        qs = qs.filter(query__author=q_author, source__author=s_author)
    if f.q:
        term = f.q.strip()
        qs = qs.filter(Q(query__seg_id__icontains=term) | Q(source__seg_id__icontains=term)
                       | Q(query__text__icontains=term) | Q(source__text__icontains=term))
    if f.verdict and user is not None:
        mine = Verdict.objects.filter(candidate=OuterRef("pk"), user=user)
        if f.verdict == "unverified":
            qs = qs.filter(~Exists(mine))
        else:
            qs = qs.filter(Exists(mine.filter(decision=f.verdict)))
    return qs.order_by(*ORDERS[f.order if f.order in ORDERS else "query"])


def candidate_page(qs: QuerySet[Candidate], *, page: int = 1, page_size: int = PAGE_SIZE) -> dict:
    """One page of candidates with both segments and their verdicts: 3 queries."""
    total = qs.count()
    pages = max(1, -(-total // page_size))
    page = min(max(1, page), pages)
    rows = with_verdicts(qs.select_related("query", "source")[(page - 1) * page_size: page * page_size])
    return {"rows": rows, "total": total, "page": page, "pages": pages, "page_size": page_size}


def with_verdicts(rows) -> list[Candidate]:
    """The candidates (a page) as a list, each with its verdicts as ``verdict_list``: one query for them all."""
    rows = list(rows)
    verdicts: dict[int, list[Verdict]] = {}
    if rows:
        for v in Verdict.objects.filter(candidate_id__in=[r.pk for r in rows]).select_related("user"):
            verdicts.setdefault(v.candidate_id, []).append(v)
    for row in rows:
        row.verdict_list = verdicts.get(row.pk, [])
    return rows


def author_pairs(*, run: DetectionRun) -> list[str]:
    """The "query author → source author" pairs among the run's candidates."""
    rows = (Candidate.objects.filter(run=run).values_list("query__author", "source__author").distinct()
            .order_by("query__author", "source__author"))
    return [f"{a} → {b}" for a, b in rows if a or b]


def inspection_progress(*, run: DetectionRun, user) -> dict:
    """Passages to inspect (the labelled candidates when a reranker labelled some, else every candidate), how
    many this user has decided, and how many remain."""
    qs = Candidate.objects.filter(run=run)
    if run.reranker and qs.exclude(label="").exists():
        qs = qs.exclude(label="")
    total = qs.count()
    decided = qs.filter(verdicts__user=user).count()
    return {"total": total, "decided": decided, "remaining": total - decided}


def verdict_rows(*, run: DetectionRun) -> QuerySet[Verdict]:
    return (Verdict.objects.filter(candidate__run=run)
            .select_related("user", "candidate__query", "candidate__source")
            .order_by("candidate__query_position", "candidate__rank", "user__username"))


def export_rows(qs: QuerySet[Candidate]):
    """(query_id, query_text, source_id, source_text, rank, score, p_cit, p_cf, label, shared, bucket, explain),
    streamed."""
    return qs.values_list("query__seg_id", "query__text", "source__seg_id", "source__text", "rank", "score", "p_cit",
                          "p_cf", "label", "shared_lemmas", "bucket", "explain").iterator(chunk_size=2000)


def comparable_runs(*, user) -> QuerySet[EvaluationRun]:
    """Finished Loci Similes runs on versions `user` may read, newest first (the compare page's choices)."""
    return (runs_visible_to(user).filter(report__isnull=False).select_related("version__benchmark")
            .defer("report", "per_query", "per_fold").order_by("-created", "-id"))


class ComparisonNotFound(DomainError):
    """A run or a query the comparison names does not exist (an API answers 404)."""

    status = 404


def query_comparison(a_id, b_id, query_id: str, *, user) -> dict:
    """Two finished evaluation runs' ranked heads for one query, with gold marked (``engine.compare.query_lists``)
    and what each finds that the other misses. Raises :class:`ComparisonNotFound` naming what is missing."""
    from workbench.engine.compare import query_lists

    runs = {}
    for name, pk in (("a", a_id), ("b", b_id)):
        run = comparable_runs(user=user).defer(None).filter(pk=pk).first()
        if run is None:
            raise ComparisonNotFound(f"{name}: no finished evaluation run {pk}")
        runs[name] = run
    rows = {name: {r.get("query_id"): r for r in run.per_query} for name, run in runs.items()}
    if query_id not in rows["a"] and query_id not in rows["b"]:
        raise ComparisonNotFound(f"query: neither run holds the query {query_id!r}")
    gold = {}
    for run in runs.values():
        for p in (run.report or {}).get("per_pair", []):
            if p.get("query_id") == query_id:
                gold[p.get("source_id")] = p.get("label")
    out = query_lists(rows["a"].get(query_id), rows["b"].get(query_id), gold)
    return {"query_id": query_id, "a": runs["a"], "b": runs["b"], **{f"list_{k}": v for k, v in out.items()
                                                                   if k in ("a", "b")},
            **{k: v for k, v in out.items() if k not in ("a", "b")}}


def detection_lists(run: DetectionRun) -> dict[str, list[tuple[str, float]]]:
    """A detection's candidates as ranked lists by query segment id: query id → [(source id, score), …]."""
    lists: dict[str, list[tuple[str, float]]] = {}
    for q, s, score in run.candidates.order_by("query_position", "rank").values_list(
            "query__seg_id", "source__seg_id", "score"):
        lists.setdefault(q, []).append((s, score))
    return lists


def evaluation_lists(run: EvaluationRun, top_k: int | None = None) -> tuple[dict[str, list], dict]:
    """An evaluation run's ranked heads (each query's ``top`` in its per-query rows, cut to ``top_k``) and its gold:
    (query id, source id) → type."""
    lists = {str(r.get("query_id")): [(str(s), float(sc)) for s, sc in (r.get("top") or [])][:top_k]
             for r in run.per_query or []}
    gold = {(str(p.get("query_id")), str(p.get("source_id"))): p.get("label")
            for p in (run.report or {}).get("per_pair", [])}
    return lists, gold


def same_text_runs(run: DetectionRun, *, user) -> list[EvaluationRun]:
    """Finished evaluation runs on a benchmark over the detection's two texts (stored corpora only)."""
    if run.query_document.corpus_id is None or run.source_document.corpus_id is None:
        return []
    return list(comparable_runs(user=user).filter(version__query_corpus_id=run.query_document.corpus_id,
                                                  version__source_corpus_id=run.source_document.corpus_id)[:50])
