"""Corpus pages: the corpora (and, for leads and researchers, a build queued as a job), a corpus's works, the
search page (one passage -> the top k segments with every channel explained, matched words marked on both sides;
its URL is the search's permalink, with CSV/JSON/TREC exports beside it) and the reader (a work's lines, paged,
each line leading to its similar passages)."""
from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.urls import reverse

from core.page_actions import form_action, page_action, say_queued
from core.roles import LEAD, RESEARCHER, has_role
from detection import corpus_reads as R
from detection.services.corpora import SOURCES, SUBSETS, corpus_build_queue
from jobs.services import job_enqueue_error


class BuildForm(forms.Form):
    name = forms.SlugField(max_length=60, help_text="lower-case letters, digits and hyphens")
    source = forms.ChoiceField(choices=[(s, s) for s in SOURCES])
    subset = forms.ChoiceField(choices=[(s, s) for s in SUBSETS], initial="classical-verse")
    extend = forms.BooleanField(required=False, help_text="add works to the corpus's index instead of rebuilding it")


@login_required
def corpora(request):
    can_build = has_role(request.user, LEAD, RESEARCHER)
    form = BuildForm(request.POST or None)
    if request.method == "POST":
        if not can_build:
            raise PermissionDenied("Building a corpus is for leads and researchers.")

        def done(job):
            say_queued(request, f"The build of {job.params['corpus']}", job_enqueue_error(job), job_id=job.pk)
            return redirect("corpora:index")

        answer = form_action(request, form, lambda d: corpus_build_queue(user=request.user, **d), done=done)
        if answer is not None:
            return answer
    return render(request, "detection/corpora.html", {"corpora": R.corpora_list(), "form": form,
                                                      "can_build": can_build, "built": R.built_subsets()})


@login_required
def corpus(request, name: str):
    c = R.corpus_get(name)
    return render(request, "detection/corpus.html", {"corpus": c, "works": c.works.all()})


def _search_page(request, c, **extra):
    works = list(c.works.all())
    ctx = {"corpus": c, "works": works, "authors": sorted({w.author for w in works}), "params": request.GET,
           "max_chars": R.corpus_search.MAX_QUERY_CHARS, "max_k": R.MAX_TOP_K, **extra}
    return render(request, "detection/corpus_search.html", ctx, status=extra.get("status", 200))


@login_required
def corpus_search(request, name: str):
    c = R.corpus_get(name)
    if not (request.GET.get("q") or request.GET.get("from_ref")):
        return _search_page(request, c)

    def run():
        req = R.request_from(request.GET)
        result = R.corpus_search_run(c, req)
        for h in result["hits"]:
            exp = h["explanation"]
            h["marked_text"] = R.marked(h["text"], exp.get("segment_words", []))
            h["marked_query"] = R.marked(result["query"], exp.get("query_words", []))
            h["reader_url"] = R.reader_url(c.name, h["work"], h["ref"])
        kind = request.GET.get("export")
        if kind in ("csv", "json", "trec"):
            return R.export_response(result, kind)
        query = request.GET.copy()
        exports = {}
        for k in ("csv", "json", "trec"):
            query["export"] = k
            exports[k] = f"{reverse('corpora:search', args=[c.name])}?{query.urlencode()}"
        return _search_page(request, c, result=result, exports=exports,
                            permalink=request.build_absolute_uri())

    return page_action(request, run, again=_shown(lambda exc: _search_page(
        request, c, error=str(exc), status=getattr(exc, "status", 400))))


@login_required
def corpus_work(request, name: str, key: str):
    c = R.corpus_get(name)
    work = R.work_get(c, key)
    def show():
        data = R.work_lines(c, work, request.GET.get("page"), ref=request.GET.get("ref") or "")
        return render(request, "detection/corpus_work.html", {"corpus": c, "work": work, **data})

    return page_action(request, show, again=_shown(lambda exc: render(
        request, "detection/corpus_work.html", {"corpus": c, "work": work, "error": str(exc), "lines": []},
        status=getattr(exc, "status", 400))))


def _shown(page):
    """A refusal on the page itself (a bad query, an index to rebuild); a missing corpus, work or line goes to
    the site's 404 page with its sentence."""
    def again(exc):
        if getattr(exc, "status", 400) == 404:
            raise exc
        return page(exc)

    return again
