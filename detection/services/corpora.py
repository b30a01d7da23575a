"""Writes of search corpora: building and extending a corpus's index (from a command with an operator's path, or
as the job ``detection.build_corpus_index`` queued from a page with a shipped source's name, never a user's
path), the rows of its works, and the refusal of a second build while one runs."""
from __future__ import annotations

import fcntl
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import transaction

from core.errors import DomainError
from detection.channels import corpus_index
from detection.corpus import corpus_files
from detection.models import CorpusWork, SearchCorpus
from jobs.models import Job

BUILD_KIND = "detection.build_corpus_index"
# the sources a page may build from, by name (never a path from a request)
SOURCES = {"tesserae-la": Path(settings.BASE_DIR) / "data" / "tesserae" / "tesserae_la.tar.xz"}
# the classical verse poets: the default corpus that `make run` builds (docs/corpus_search.md: 123,582 lines)
CLASSICAL_VERSE = ("vergil.", "ovid.", "lucan.", "statius.", "horace.", "catullus.", "propertius.", "tibullus.",
                   "lucretius.", "juvenal.", "persius.", "martial.", "valerius_flaccus.", "silius_italicus.")
SUBSETS = {"classical-verse": CLASSICAL_VERSE, "all": None}
DEFAULT_CORPUS = ("tesserae-verse", "tesserae-la", "classical-verse")


class CorpusError(DomainError):
    """A corpus request that cannot be honoured (the message says why)."""


def corpus_root() -> Path:
    return Path(settings.VAR_DIR) / "corpora"


@contextmanager
def _build_lock(name: str):
    """One build of a corpus at a time on this machine (pages, jobs and commands alike)."""
    root = corpus_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{name}.lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CorpusError(f"the corpus {name!r} is being built already: wait for that build to finish",
                              status=409) from None
        yield


def _subset_filter(subset: str | None):
    if subset in (None, "", "all"):
        return None
    if subset not in SUBSETS:
        raise CorpusError(f"unknown subset {subset!r}: one of {', '.join(SUBSETS)}")
    return SUBSETS[subset]


def corpus_build(*, name: str, path, subset: str | None = None, works: list[str] | None = None,
                 extend: bool = False, params: dict | None = None, owner=None, progress=None, log=None,
                 job_id: int | None = None) -> dict:
    """Build (or, ``extend``, add works to) the index of corpus ``name`` from the folder or archive ``path``.
    Malformed ``.tess`` lines are reported (file, line) and skipped; the build goes on. Returns a summary."""
    from django.utils.text import slugify

    if not name or slugify(name) != name:
        raise CorpusError(f"a corpus name is lower-case letters, digits and hyphens, not {name!r}")
    prefixes = _subset_filter(subset)
    wanted = set(works) if works else None
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path}: no such folder or archive")
    try:
        settings_ = corpus_index.channel_settings(params)
    except corpus_index.CorpusIndexError as exc:
        raise CorpusError(str(exc)) from None
    with _build_lock(name):
        row, _ = SearchCorpus.objects.get_or_create(name=name, defaults={"owner": owner})
        if extend and row.status != SearchCorpus.Status.READY:
            raise CorpusError(f"the corpus {name!r} has no finished index to extend: build it first", status=409)
        previous = row.status
        SearchCorpus.objects.filter(pk=row.pk).update(status=SearchCorpus.Status.BUILDING, build_job_id=job_id)
        report = corpus_files.new_report()

        def want(key: str) -> bool:
            return (prefixes is None or key.startswith(prefixes)) and (wanted is None or key in wanted)

        def chosen():
            for w in corpus_files.read_corpus(path, report=report, only=want):
                if log:
                    log(f"{w.key}: {len(w.texts):,} segments ({w.genre})")
                yield w

        try:
            manifest = corpus_index.build_index(corpus_root(), name, list(chosen()), settings_, extend=extend,
                                                progress=progress)
        except BaseException as exc:  # a failed or cancelled build leaves the index it replaces in service
            ready = previous == SearchCorpus.Status.READY and (corpus_root() / name / "manifest.json").is_file()
            SearchCorpus.objects.filter(pk=row.pk).update(status=previous if ready else SearchCorpus.Status.FAILED)
            if isinstance(exc, (corpus_index.CorpusIndexError, corpus_files.InputError)):
                raise CorpusError(str(exc), status=409 if isinstance(exc, corpus_index.StaleIndex) else 400) from None
            raise
        skipped = {"summary": report.summary("lines"), "lines": list(report.messages)}
        for line in report.messages:
            if log:
                log(f"skipped: {line}")
        size = corpus_index.index_bytes(corpus_root() / name)
        with transaction.atomic():
            row.works.all().delete()
            CorpusWork.objects.bulk_create([
                CorpusWork(corpus=row, key=w["key"], author=w["author"], title=w["title"], cite=w["cite"],
                           genre=w["genre"], start=w["start"], n_segments=w["n"]) for w in manifest["works"]])
            SearchCorpus.objects.filter(pk=row.pk).update(
                status=SearchCorpus.Status.READY, config=manifest["config"], digest=manifest["digest"],
                n_segments=manifest["n_segments"], index_bytes=size,
                report={"seconds": manifest["seconds_last_build"], "added": manifest["added_last_build"],
                        "skipped": skipped, **_whole_subset(path, subset, works, extend)})
    return {"corpus": name, "works": len(manifest["works"]), "segments": manifest["n_segments"],
            "added": manifest["added_last_build"], "seconds": manifest["seconds_last_build"], "bytes": size,
            "skipped": skipped}


def _whole_subset(path: Path, subset: str | None, works, extend: bool) -> dict:
    """``{"source": …, "subset": …}`` when the index holds a whole subset of a shipped source (the corpora page
    states its count), else nothing."""
    source = next((k for k, p in SOURCES.items() if Path(p).resolve() == path.resolve()), None)
    if source is None or works or extend:
        return {}
    return {"source": source, "subset": subset or "all"}


def active_build(name: str) -> Job | None:
    return (Job.objects.filter(kind=BUILD_KIND, params__corpus=name,
                               status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).order_by("-id").first())


@transaction.atomic
def corpus_build_queue(*, user, name: str, source: str, subset: str = "all", extend: bool = False) -> Job:
    """Queue the build of ``name`` from the shipped source ``source`` (a name); a second build of a corpus while
    one is queued or running is refused."""
    from jobs.services import job_create

    if source not in SOURCES:
        raise CorpusError(f"unknown source {source!r}: one of {', '.join(SOURCES)}")
    _subset_filter(subset)
    SearchCorpus.objects.select_for_update().filter(name=name).first()
    running = active_build(name)
    if running is not None:
        raise CorpusError(f"the corpus {name!r} is being built already (job {running.pk}): wait for it to finish",
                          status=409)
    row, _ = SearchCorpus.objects.get_or_create(name=name, defaults={"owner": user})
    job = job_create(kind=BUILD_KIND, params={"corpus": name, "source": source, "subset": subset, "extend": extend},
                     owner=user)
    SearchCorpus.objects.filter(pk=row.pk).update(build_job=job)
    return job


def queue_default_corpus(owner) -> str:
    """`make run`'s default corpus (the classical verse poets of the shipped Tesserae texts), queued once."""
    name, source, subset = DEFAULT_CORPUS
    row = SearchCorpus.objects.filter(name=name).first()
    if row is not None and row.status == SearchCorpus.Status.READY:
        return f"corpus {name}: ready ({row.n_segments:,} segments)"
    if not SOURCES[source].is_file() or active_build(name) is not None:
        return f"corpus {name}: " + ("being built" if SOURCES[source].is_file() else "source not shipped")
    job = corpus_build_queue(user=owner, name=name, source=source, subset=subset)
    return f"corpus {name}: build queued (job {job.pk}, see /jobs/)"


def source_path(source: str) -> Path:
    if source not in SOURCES:
        raise CorpusError(f"unknown source {source!r}")
    return SOURCES[source]
