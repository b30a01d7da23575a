"""Reads of search corpora: a corpus by name (404 with a sentence), its works and a work's lines page by page,
and the one-passage search with its filters, explanations and exports (CSV, JSON, TREC run). Each process keeps
the loaded index (memory-mapped) and its searcher per corpus; an index whose digest differs from the analyser's
and the configuration's is refused with 409 and "rebuild"."""
from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field

from django.http import HttpResponse

from core.csv_export import csv_text
from detection.channels import corpus_index, corpus_search
from detection.methods.specs import MethodConfig
from detection.models import CorpusWork, SearchCorpus
from detection.services.corpora import CorpusError, corpus_root

MAX_TOP_K = 100
LINES_PER_PAGE = 100
_CACHE: dict[str, tuple] = {}
_LOCK = threading.Lock()


def corpus_get(name: str) -> SearchCorpus:
    row = SearchCorpus.objects.filter(name=name).first()
    if row is None:
        raise CorpusError(f"There is no corpus named {name!r}.", status=404)
    return row


def corpora_list():
    return SearchCorpus.objects.all()


def built_subsets(source: str = "tesserae-la") -> dict[str, dict]:
    """For each subset of the shipped `source` that a ready corpus holds whole (``classical_verse`` for
    ``classical-verse``): the corpus's name and the segments its index holds (its manifest's count)."""
    built = {}
    for c in SearchCorpus.objects.filter(status=SearchCorpus.Status.READY, report__source=source).order_by("updated"):
        built[c.report["subset"].replace("-", "_")] = {"name": c.name, "segments": f"{c.n_segments:,}"}
    return built


def work_get(corpus: SearchCorpus, key: str) -> CorpusWork:
    work = corpus.works.filter(key=key).first()
    if work is None:
        raise CorpusError(f"The corpus {corpus.name!r} has no work {key!r}.", status=404)
    return work


def searcher(corpus: SearchCorpus) -> corpus_search.CorpusSearcher:
    """The corpus's loaded searcher; refuses a corpus not built yet (409) or built with another analyser or
    configuration (409, "rebuild")."""
    if corpus.status != SearchCorpus.Status.READY:
        raise CorpusError(f"The corpus {corpus.name!r} has no index yet ({corpus.status}): build it first.",
                          status=409)
    folder = corpus_root() / corpus.name
    try:
        stamp = (folder / "manifest.json").stat().st_mtime_ns
    except FileNotFoundError:
        raise CorpusError(f"The index of {corpus.name!r} is missing on this server: rebuild it.", status=409) from None
    try:
        expected = corpus_index.analyser_digest(MethodConfig.from_json(corpus.config).digest)
    except (KeyError, TypeError, ValueError):
        raise CorpusError(f"The corpus {corpus.name!r} has no valid configuration: rebuild it.", status=409) from None
    with _LOCK:
        hit = _CACHE.get(corpus.name)
        if hit is not None and hit[0] == stamp:
            if hit[1].index.manifest["digest"] != expected:
                raise CorpusError(f"The index of {corpus.name!r} was built with another analyser or method "
                                  "configuration: rebuild it.", status=409)
            return hit[1]
        try:
            settings_ = corpus_index.channel_settings((corpus.config or {}).get("params"))
            index = corpus_index.CorpusIndex(folder, expected_digest=expected)
        except corpus_index.StaleIndex:
            raise CorpusError(f"The index of {corpus.name!r} was built with another analyser or method "
                              "configuration: rebuild it.", status=409) from None
        except corpus_index.CorpusIndexError as exc:
            raise CorpusError(str(exc), status=409) from None
        s = corpus_search.CorpusSearcher(index, settings_)
        _CACHE[corpus.name] = (stamp, s)
        return s


def work_lines(corpus: SearchCorpus, work: CorpusWork, page: str | int | None = 1, *, ref: str = "") -> dict:
    """A page of the work's lines (``page`` as the request gave it: anything but a page number is the first page,
    a number past either end the nearest page; ``ref``: the page that holds this line, marked)."""
    text = str(page or "1")
    page = int(text) if text.isascii() and text.isdigit() and len(text) < 10 else 1
    s = searcher(corpus)
    n_pages = max(1, -(-work.n_segments // LINES_PER_PAGE))
    if ref:
        at = next((i for i in range(work.start, work.start + work.n_segments) if s.index.ref(i) == ref), None)
        if at is None:
            raise CorpusError(f"{work.key} has no line {ref!r}.", status=404)
        page = (at - work.start) // LINES_PER_PAGE + 1
    page = min(max(1, page), n_pages)
    a = work.start + (page - 1) * LINES_PER_PAGE
    b = min(work.start + work.n_segments, a + LINES_PER_PAGE)
    lines = [{"ref": s.index.ref(i), "text": s.index.text(i)} for i in range(a, b)]
    return {"page": page, "n_pages": n_pages, "lines": lines, "marked_ref": ref}


_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def marked(text: str, words) -> list[tuple[str, bool]]:
    """``text`` in pieces, each word marked when its analysis holds one of ``words`` (the explanation's matched
    words, analysed tokens: lower case, u/i spelling, enclitics apart)."""
    from detection.latin.analysis import latin_tokens

    wanted = set(words)
    out, pos = [], 0
    for m in _WORD.finditer(text):
        if m.start() > pos:
            out.append((text[pos:m.start()], False))
        out.append((m.group(0), bool(wanted) and any(t in wanted for t in latin_tokens(m.group(0)))))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], False))
    return out


def reader_url(corpus: str, work: str, ref: str) -> str:
    from urllib.parse import urlencode

    from django.urls import reverse

    return f"{reverse('corpora:work', args=[corpus, work])}?{urlencode({'ref': ref})}#line-{ref}"


def work_segments(corpus: SearchCorpus, work: CorpusWork) -> list[tuple[str, str]]:
    """Every segment of a work as (citation, text), in order (what the workbench copies)."""
    s = searcher(corpus)
    return [(s.index.citation(i), s.index.text(i)) for i in range(work.start, work.start + work.n_segments)]


def ready_works():
    """The works of every built corpus (the workbench's stored texts)."""
    return CorpusWork.objects.filter(corpus__status=SearchCorpus.Status.READY).select_related("corpus")


def segment_at(corpus: SearchCorpus, work: CorpusWork, ref: str) -> str:
    """The text of the work's segment ``ref`` (404 when the work has none)."""
    s = searcher(corpus)
    for i in range(work.start, work.start + work.n_segments):
        if s.index.ref(i) == ref:
            return s.index.text(i)
    raise CorpusError(f"{work.key} has no line {ref!r}.", status=404)


@dataclass
class SearchRequest:
    query: str = ""
    k: int = 20
    authors: list[str] = field(default_factory=list)
    works: list[str] = field(default_factory=list)
    genre: str = ""
    from_work: str = ""  # the passage's own work (picked in the reader): excluded unless include_own
    from_ref: str = ""
    include_own: bool = False


def request_from(params) -> SearchRequest:
    """A search request from query parameters (a page's or the API's): ``q``, ``k``, ``author``, ``work``
    (repeatable), ``genre``, ``from_work`` + ``from_ref`` (a line of the corpus instead of ``q``), ``include_own``."""
    def ints(name, default):
        raw = params.get(name) or ""
        if raw == "":
            return default
        try:
            return int(raw)
        except ValueError:
            raise CorpusError(f"{name} must be a whole number, not {raw[:20]!r}") from None

    k = ints("k", 20)
    if not 1 <= k <= MAX_TOP_K:
        raise CorpusError(f"k must be between 1 and {MAX_TOP_K}, not {k}")
    genre = params.get("genre") or ""
    if genre not in ("", "verse", "prose"):
        raise CorpusError(f"genre must be verse or prose, not {genre[:20]!r}")
    return SearchRequest(query=params.get("q") or "", k=k, authors=[a for a in params.getlist("author") if a],
                         works=[w for w in params.getlist("work") if w], genre=genre,
                         from_work=params.get("from_work") or "", from_ref=params.get("from_ref") or "",
                         include_own=(params.get("include_own") or "") in ("1", "true", "on", "yes"))


def corpus_search_run(corpus: SearchCorpus, req: SearchRequest) -> dict:
    """The top ``k`` segments of the corpus for the request's passage, every channel with its explanation."""
    s = searcher(corpus)
    own = ""
    if req.from_work:
        work = work_get(corpus, req.from_work)
        own = work.key
        if req.from_ref and not req.query:
            req.query = segment_at(corpus, work, req.from_ref)
    for key in req.works:
        work_get(corpus, key)
    try:
        text = corpus_search.check_query(req.query)
    except corpus_search.QueryError as exc:
        raise CorpusError(str(exc)) from None
    t0 = time.process_time()

    def run(exclude):
        flt = corpus_search.Filters(authors=req.authors, works=req.works, genre=req.genre,
                                    exclude_works=[exclude] if exclude and not req.include_own else [])
        return s.search(text, req.k, filters=flt, explain=req.k, checked=True)

    hits, info = run(own)
    if not own and not req.include_own:  # a typed line of the corpus (the same words): its own work left out too
        from detection.latin.analysis import latin_tokens

        words = latin_tokens(text)
        same = [h for h in hits if latin_tokens(h.text) == words]
        if same:
            own = same[0].work["key"]
            hits, info = run(own)
    seconds = time.process_time() - t0
    return {"corpus": corpus.name, "query": text, "k": req.k, "excluded_work": own if not req.include_own else "",
            "filters": {"author": req.authors, "work": req.works, "genre": req.genre},
            "n_segments": info["n_segments"], "cpu_ms": round(seconds * 1000, 1), "query_tokens": info["tokens"],
            "hits": [{"rank": r + 1, "score": round(h.score, 6), "work": h.work["key"], "author": h.work["author"],
                      "title": h.work["title"], "genre": h.work["genre"], "ref": h.ref, "citation": h.citation,
                      "text": h.text, "channels": h.channels, "explanation": h.explanation}
                     for r, h in enumerate(hits)]}


def export_rows(result: dict) -> list[dict]:
    rows = []
    for h in result["hits"]:
        row = {"rank": h["rank"], "citation": h["citation"], "work": h["work"], "ref": h["ref"], "score": h["score"],
               "text": h["text"]}
        row.update({f"channel_{c}": v for c, v in h["channels"].items()})
        row["matched_words"] = " ".join(h["explanation"].get("segment_words", []))
        rows.append(row)
    return rows


def trec_run(result: dict, qid: str = "q1", run_name: str = "similia-channels") -> str:
    """The hits as a TREC run file (``qid Q0 docid rank score run``; docid: work key and reference)."""
    return "".join(f"{qid} Q0 {h['work']}:{h['ref']} {h['rank']} {h['score']:.6f} {run_name}\n"
                   for h in result["hits"])


def export_response(result: dict, kind: str) -> HttpResponse:
    """A search as a download: CSV (one row a hit, every channel a column), JSON (the whole answer) or a TREC run."""
    name = f"{result['corpus']}-search"
    if kind == "csv":
        rows = export_rows(result)
        header = list(rows[0]) if rows else ["rank", "citation", "work", "ref", "score", "text"]
        resp = HttpResponse(csv_text(header, rows), content_type="text/csv; charset=utf-8")
        resp["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    elif kind == "trec":
        resp = HttpResponse(trec_run(result), content_type="text/plain; charset=utf-8")
        resp["Content-Disposition"] = f'attachment; filename="{name}.trec"'
    else:
        resp = HttpResponse(json.dumps(result, ensure_ascii=False, indent=1), content_type="application/json")
        resp["Content-Disposition"] = f'attachment; filename="{name}.json"'
    return resp
