"""The workbench's query and source texts picked from a search corpus's works instead of uploaded (issue 38)."""
import pytest

from detection.services import corpora
from tests.detection.corpus.conftest import small_corpus_dir  # noqa: F401  (the small real corpus)
from workbench.models import DetectionRun, Document

pytestmark = pytest.mark.django_db


def test_a_run_between_two_works_of_a_corpus(client, users, settings, tmp_path, small_corpus_dir):  # noqa: F811
    settings.VAR_DIR = tmp_path / "var"
    corpora.corpus_build(name="small", path=small_corpus_dir)
    client.force_login(users["researcher"])
    html = client.get("/workbench/").content.decode()
    assert 'value="work:small/vergil.eclogues"' in html and "corpus small: vergil, eclogues (828 segments)" in html
    form = {"retriever": "bm25-lemma", "top_k": 3, "threshold_cit": 0.5, "threshold_cf": 0.5,
            "query_stored": "work:small/vergil.eclogues", "source_stored": "work:small/horace.ars_poetica"}
    response = client.post("/workbench/", form)
    run = DetectionRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/workbench/runs/{run.pk}/"
    q, s = run.query_document, run.source_document
    assert (q.n_segments, s.n_segments) == (828, 476) and q.name == "vergil, eclogues (small)"
    assert list(q.segments.values_list("seg_id", flat=True)[:2]) == ["verg. ecl. 1.1", "verg. ecl. 1.2"]
    assert q.provenance == {"search_corpus": "small", "work": "vergil.eclogues", "digest": q.provenance["digest"]}
    client.post("/workbench/", form)
    assert Document.objects.count() == 2  # picked again: the same copies
    missing = client.post("/workbench/", {**form, "query_stored": "work:small/vergil.nothing"})
    assert missing.status_code == 200 and "pick a stored one" in missing.content.decode()  # not offered
