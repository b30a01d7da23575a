"""Fixtures: the locisimiles package's example texts uploaded and detected through the services."""
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "data" / "locisimiles" / "package_examples"


@pytest.fixture
def finished_detection(users):
    """bm25-lemma + the lexical rule over the package's 11 Jerome queries and 10 Virgil sources, run in-process."""
    from jobs.runner import run_job
    from workbench.services import detection_run_create, document_upload

    owner = users["researcher"]
    query = document_upload(name="hieronymus_samples.csv", data=(EXAMPLES / "hieronymus_samples.csv").read_bytes(),
                            owner=owner)
    source = document_upload(name="vergil_samples.csv", data=(EXAMPLES / "vergil_samples.csv").read_bytes(),
                             owner=owner)
    run = detection_run_create(query_document=query, source_document=source, retriever="bm25-lemma", top_k=3,
                               reranker="lexical-rule", thresholds={"cit.": 0.2, "cf.": 0.2}, owner=owner)
    assert run_job(run.job_id) == "succeeded"
    run.refresh_from_db()
    return run


@pytest.fixture
def loci_version(db):
    from benchmarks.services import benchmark_import_545
    from tests.benchmarks.conftest import REF_TYPE, WITH_TEXT

    version, _ = benchmark_import_545(with_text_path=WITH_TEXT, ref_type_path=REF_TYPE, name="loci-similes-545")
    return version
