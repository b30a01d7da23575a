"""The detection job with a unit and the explaining ``channels`` retriever: windows over stored Lucan and Aeneid
lines, shards, explanations carried through the merged candidates to a result store."""
import pytest

from benchmarks import detection_jobs
from benchmarks.models import Corpus, Segment
from benchmarks.services.detection import DetectionError, detection_job_create
from core.paths import shared_data_dir
from detection.latin.readers import read_tess
from jobs.runner import run_job

TESS = shared_data_dir() / "latin_texts" / "tesserae"
pytestmark = pytest.mark.django_db
CAPTURED = []


@detection_jobs.register_result_store("test-capture-explained")
def _capture(context, params, candidates, merged):
    CAPTURED.append(candidates)
    return {"stored": len(candidates)}


def _corpus(name, side, stem, prefix, refs):
    units = {u.ref: u.text for u in read_tess(TESS / f"{stem}.tess")}
    corpus = Corpus.objects.create(name=name, side=side)
    Segment.objects.bulk_create(Segment(corpus=corpus, seg_id=f"{prefix} {r}", text=units[r]) for r in refs)
    return corpus


@pytest.fixture
def corpora():
    if not TESS.exists():
        pytest.skip("shared data not available")
    detection_jobs._LOADED.clear()
    qc = _corpus("lucan", "query", "lucan.bellum_civile", "luc.", [f"2.{i}" for i in range(10, 16)])
    sc = _corpus("aeneid", "source", "vergil.aeneid", "verg. aen.", [f"7.{i}" for i in range(300, 330)])
    return qc, sc


def test_windows_and_explanations_reach_the_store(corpora):
    qc, sc = corpora
    CAPTURED.clear()
    job = detection_job_create(query_corpus=qc, source_corpus=sc, method="channels", k=3, shard_size=3,
                               unit="window-2", candidates=True, store={"name": "test-capture-explained"})
    run_job(job.pk)
    from jobs.models import Job

    for shard in Job.objects.filter(parent=job).order_by("shard_index"):
        run_job(shard.pk)
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    cands = CAPTURED[-1]
    assert len(cands) == 18 and cands.explain is not None and len(cands.explain) == 18
    # luc. 2.11 "Fatorum immoto ..." (query 1): its window finds the one holding aen. 7.314 "immota ... fatis"
    first = [e for q, e in zip(cands.query.tolist(), cands.explain) if q == 1][0]
    assert first["query_lines"] == ["luc. 2.11", "luc. 2.12"]
    assert "verg. aen. 7.314" in first["source_lines"]
    assert any(c["name"] == "edit" and ["immoto", "immota"] in c["matches"] for c in first["channels"])
    # the shards (3 queries each) give what one search over all the windows gives
    from detection.latin.units import make_units
    from detection.methods import registry

    q_rows = list(Segment.objects.filter(corpus=qc).order_by("pk").values_list("seg_id", "text"))
    s_rows = list(Segment.objects.filter(corpus=sc).order_by("pk").values_list("seg_id", "text"))
    qu = make_units([i for i, _ in q_rows], [t for _, t in q_rows], "window-2")
    su = make_units([i for i, _ in s_rows], [t for _, t in s_rows], "window-2")
    whole = registry.build("channels").fit([u.id for u in su], [u.text for u in su]).search([u.text for u in qu], 3)
    assert cands.source.reshape(6, 3).tolist() == whole.indices.tolist()


def test_a_bad_unit_is_refused(corpora):
    qc, sc = corpora
    with pytest.raises(DetectionError, match="unit must be one of line, window-2, window-3"):
        detection_job_create(query_corpus=qc, source_corpus=sc, method="channels", unit="verse")
