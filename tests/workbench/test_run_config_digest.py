"""A workbench detection run stores the configurations its job carries (``MethodConfig.to_json``, with their
digests), reads check the digest, and the migration fills them for runs made before the fields existed."""
import pytest

from detection.methods import ParamError
from tests.detection.methods.conftest import stored_config

pytestmark = pytest.mark.django_db


def test_a_detection_run_stores_the_configurations_its_job_carries(finished_detection):
    from workbench.models import DetectionRun

    row = DetectionRun.objects.get(pk=finished_detection.pk)
    params = finished_detection.job.params
    assert row.retriever_config == params["method"] and row.reranker_config == params["reranker"]
    assert row.retriever_method_config.digest == params["method"]["digest"]
    assert dict(row.retriever_method_config.params) == row.retriever_config_params
    assert row.reranker_method_config.name == "lexical-rule"
    row.reranker_config = {**row.reranker_config, "params": {"edited": True}}
    with pytest.raises(ParamError, match="does not match its digest"):
        row.reranker_method_config


def test_the_migration_fills_the_configurations_of_existing_runs(users, migrate_back_and_forth):
    from tests.workbench.conftest import EXAMPLES
    from workbench.services import document_upload

    owner = users["researcher"]
    query = document_upload(name="q.csv", data=(EXAMPLES / "hieronymus_samples.csv").read_bytes(), owner=owner)
    source = document_upload(name="s.csv", data=(EXAMPLES / "vergil_samples.csv").read_bytes(), owner=owner)

    def old_rows(apps):
        Old = apps.get_model("workbench", "DetectionRun")
        return (Old.objects.create(query_document_id=query.pk, source_document_id=source.pk, retriever="bm25-lemma",
                                   retriever_params={"k1": 1.5, "b": 0.75}),
                Old.objects.create(query_document_id=query.pk, source_document_id=source.pk, retriever="tfidf-lemma",
                                   reranker="lexical-rule", reranker_params={}))

    plain, reranked = migrate_back_and_forth([("workbench", "0003_candidate_explain_score_order_run_notes")],
                                             [("workbench", "0004_detectionrun_method_config_digest")], old_rows)
    from workbench.models import DetectionRun

    first = DetectionRun.objects.get(pk=plain.pk)
    assert first.retriever_config == stored_config("bm25-lemma", "retriever", {"k1": 1.5, "b": 0.75}).to_json()
    assert first.reranker_config is None and first.reranker_method_config is None
    second = DetectionRun.objects.get(pk=reranked.pk)
    assert second.retriever_method_config == stored_config("tfidf-lemma", "retriever", {})
    assert second.reranker_method_config == stored_config("lexical-rule", "reranker", {})
