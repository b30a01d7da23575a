"""The detection job with a unit and the explaining ``channels`` retriever: windows over stored Lucan and Aeneid
lines, shards, explanations carried through the merged candidates to a result store."""
import pytest

from benchmarks.models import Corpus, Segment
from core.paths import shared_data_dir
from detection import detection_jobs
from detection.latin.readers import read_tess
from detection.services.detection import DetectionError, detection_job_create
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


def test_sentences_are_searched_and_reported_on_their_first_lines():
    """unit=sentence: Lucan 2.4-2.15 and Aeneid 7.300-7.329 as sentences; Lucan's sentence of 2.7-2.15 ('Fatorum
    immoto ...') finds Juno's sentence of aen. 7.313-7.316 ('atque immota manet fatis ...') first, reported on the
    segments where both sentences start, with every line they cover in the explanation."""
    if not TESS.exists():
        pytest.skip("shared data not available")
    detection_jobs._LOADED.clear()
    qc = _corpus("lucan-s", "query", "lucan.bellum_civile", "luc.", [f"2.{i}" for i in range(4, 16)])
    sc = _corpus("aeneid-s", "source", "vergil.aeneid", "verg. aen.", [f"7.{i}" for i in range(300, 330)])
    CAPTURED.clear()
    job = detection_job_create(query_corpus=qc, source_corpus=sc, method="channels", k=2, shard_size=1,
                               unit="sentence", candidates=True, store={"name": "test-capture-explained"})
    assert job.params["unit"] == "sentence"
    run_job(job.pk)
    from jobs.models import Job

    shards = list(Job.objects.filter(parent=job).order_by("shard_index"))
    from detection.latin.units import make_units

    q_rows = list(Segment.objects.filter(corpus=qc).order_by("pk").values_list("seg_id", "text"))
    q_units = make_units([i for i, _ in q_rows], [t for _, t in q_rows], "sentence")
    assert len(q_units) > 1 and len(shards) in (0, len(q_units))  # a shard per query sentence
    for shard in shards:
        run_job(shard.pk)
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    cands = CAPTURED[-1]
    q_ids = [i for i, _ in q_rows]
    s_ids = list(Segment.objects.filter(corpus=sc).order_by("pk").values_list("seg_id", flat=True))
    fatorum = q_ids.index("luc. 2.7")
    rows = [n for n, q in enumerate(cands.query.tolist()) if q == fatorum]
    best = min(rows, key=lambda n: int(cands.rank[n]))
    assert s_ids[int(cands.source[best])] == "verg. aen. 7.313"  # the segment where Juno's sentence starts
    ex = cands.explain[best]
    assert ex["query_lines"] == [f"luc. 2.{i}" for i in range(7, 16)]
    assert ex["source_lines"] == [f"verg. aen. 7.{i}" for i in range(313, 317)]
    # two sentences start on luc. 2.4 (2.4 alone, then 2.4-2.6): their candidates are on segment 0, each source
    # once (2 + 2 hits, one source shared: 3 rows)
    assert [u.lines[0] for u in q_units] == ["luc. 2.4", "luc. 2.4", "luc. 2.7"]
    assert sorted(set(cands.query.tolist())) == [0, fatorum] and cands.query.tolist().count(0) == 3
    pairs = list(zip(cands.query.tolist(), cands.source.tolist()))
    assert len(pairs) == len(set(pairs))
