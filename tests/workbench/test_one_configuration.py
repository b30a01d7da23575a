"""One method configuration, one error (issue 27): a bad retriever or reranker value sent to the workbench's page,
its API and the `detect` command gets the registry's own message, word for word; no service wraps the registry's
`ParamError` in an error of its own, and nothing is stored for it. The job a valid request queues carries the
configuration the service made (`MethodConfig.to_json()`), not the user's raw parameters."""
import html
import io
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from detection.methods import ParamError, UnknownMethod, registry
from workbench.models import DetectionRun, Document

from .conftest import EXAMPLES

pytestmark = pytest.mark.django_db

CASES = [  # (retriever, its params, reranker, its params, the same as the command's options)
    ("bm25-lemma", {"k1": 99}, "", {}, ["--param", "k1=99"]),
    ("bm25-lemma", {"cache_dir": "/tmp"}, "", {}, ["--param", "cache_dir=/tmp"]),
    ("tfidf-lemma", {"stopwords": "maybe"}, "", {}, ["--param", "stopwords=maybe"]),
    ("no-such-method", {}, "", {}, []),
    ("bm25-lemma", {}, "lexical-rule", {"gap": 0}, ["--reranker", "lexical-rule", "--reranker-param", "gap=0"]),
]


def _file(name, data):
    f = io.BytesIO(data)
    f.name = name
    return f


def _expected(retriever, params, reranker, reranker_params) -> str:
    with pytest.raises((ParamError, UnknownMethod)) as caught:
        registry.configure(retriever, params, kind="retriever")
        registry.configure(reranker, reranker_params, kind="reranker")
    return str(caught.value)


@pytest.mark.parametrize("retriever, params, reranker, reranker_params, options", CASES)
def test_page_api_and_command_give_the_registrys_message(client, client_for, users, finished_detection, tmp_path,
                                                         retriever, params, reranker, reranker_params, options):
    import json

    expected = _expected(retriever, params, reranker, reranker_params)
    runs, documents = DetectionRun.objects.count(), Document.objects.count()
    api = client_for("researcher").post("/api/v1/workbench/runs/", {
        "query_document": finished_detection.query_document_id,
        "source_document": finished_detection.source_document_id, "retriever": retriever,
        "retriever_params": params, "reranker": reranker, "reranker_params": reranker_params}, format="json")
    assert api.status_code == 400 and api.json() == {"detail": expected}
    if retriever in registry.names("retriever"):  # the page's picker lists registered methods only
        client.force_login(users["researcher"])
        page = client.post("/workbench/", {
            "retriever": retriever, "retriever_params": json.dumps(params), "reranker": reranker,
            "reranker_params": json.dumps(reranker_params), "top_k": 3, "threshold_cit": 0.5, "threshold_cf": 0.5,
            "query_file": _file("hieronymus_samples.csv", (EXAMPLES / "hieronymus_samples.csv").read_bytes()),
            "source_file": _file("vergil_samples.csv", (EXAMPLES / "vergil_samples.csv").read_bytes())})
        shown = html.unescape(page.content.decode())
        assert page.status_code == 200 and expected in shown  # the form again, with the registry's message
    assert (DetectionRun.objects.count(), Document.objects.count()) == (runs, documents)  # nothing half-stored
    (tmp_path / "q.csv").write_bytes((EXAMPLES / "hieronymus_samples.csv").read_bytes())
    (tmp_path / "s.csv").write_bytes((EXAMPLES / "vergil_samples.csv").read_bytes())
    with pytest.raises(CommandError) as command:
        call_command("detect", "--query", str(tmp_path / "q.csv"), "--source", str(tmp_path / "s.csv"),
                     "--output", str(tmp_path / "out.csv"), "--method", retriever, *options, stderr=StringIO())
    assert str(command.value) == expected


def test_the_job_carries_the_configuration_the_service_made(finished_detection):
    from detection.detection_jobs import method_configs

    config, rr_config = method_configs(finished_detection.job.params)
    assert config == registry.configure("bm25-lemma", {}) and config.digest == \
        finished_detection.job.params["method"]["digest"]
    assert rr_config.name == "lexical-rule" and dict(rr_config.params) == finished_detection.reranker_config_params
    assert dict(config.params) == finished_detection.retriever_config_params


@pytest.mark.parametrize("top_k", [0, 1001])
def test_a_run_limit_has_one_message_on_the_page_the_api_and_in_the_service(client, client_for, users,
                                                                             finished_detection, top_k):
    """`top_k` of a workbench run is declared once (core/run_limits.py): the form's field, the serializer's and the
    service's check are made from it, so the same value gets the same message from each."""
    from core.run_limits import WORKBENCH_TOP_K
    from workbench.services import WorkbenchError, detection_run_create

    expected = WORKBENCH_TOP_K.message
    assert expected == "top_k must be an integer between 1 and 1000"
    runs = DetectionRun.objects.count()
    api = client_for("researcher").post("/api/v1/workbench/runs/", {
        "query_document": finished_detection.query_document_id,
        "source_document": finished_detection.source_document_id, "retriever": "bm25-lemma", "top_k": top_k},
        format="json")
    assert api.status_code == 400 and api.json() == {"top_k": [expected]}
    client.force_login(users["researcher"])
    page = client.post("/workbench/", {
        "retriever": "bm25-lemma", "top_k": top_k, "threshold_cit": 0.5, "threshold_cf": 0.5,
        "query_stored": f"doc:{finished_detection.query_document_id}",
        "source_stored": f"doc:{finished_detection.source_document_id}"})
    assert page.status_code == 200 and expected in html.unescape(page.content.decode())
    with pytest.raises(WorkbenchError) as caught:
        detection_run_create(query_document=finished_detection.query_document,
                             source_document=finished_detection.source_document, retriever="bm25-lemma", top_k=top_k)
    assert str(caught.value) == expected
    assert DetectionRun.objects.count() == runs


@pytest.mark.parametrize("option, value, expected", [("--top-k", "0", "top_k must be an integer between 1 and 10000"),
                                                     ("--jobs", "0", "jobs must be an integer between 1 and 64")])
def test_the_detect_commands_limits_come_from_the_same_declarations(tmp_path, option, value, expected):
    from core.run_limits import DETECT_JOBS, DETECT_TOP_K

    assert expected in (DETECT_TOP_K.message, DETECT_JOBS.message)
    (tmp_path / "q.csv").write_bytes((EXAMPLES / "hieronymus_samples.csv").read_bytes())
    (tmp_path / "s.csv").write_bytes((EXAMPLES / "vergil_samples.csv").read_bytes())
    with pytest.raises(CommandError) as command:
        call_command("detect", "--query", str(tmp_path / "q.csv"), "--source", str(tmp_path / "s.csv"),
                     "--output", str(tmp_path / "out.csv"), option, value, stderr=StringIO())
    assert str(command.value) == expected and not (tmp_path / "out.csv").exists()
