"""A parameter combination a method cannot take (``hybrid`` with ``candidates=union`` and the default
``semantic=maxsim``) is refused where parameters are validated, with one message naming both parameters: the
registry, the workbench form and API, the detection job, the evaluation API, and the ``detect`` / ``evaluate``
commands. Nothing is stored or queued."""
import html
import io
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from detection.methods import ParamError, registry
from jobs.models import Job

MESSAGE = ("candidates='union' needs a dense semantic score: set semantic=sif or semantic=usif "
           "(semantic='maxsim' scores only a given candidate list)")
BAD = {"candidates": "union"}  # semantic left at its default, maxsim


def test_the_registry_refuses_it_naming_both_parameters():
    with pytest.raises(ParamError) as err:
        registry.configure("hybrid", BAD)
    assert str(err.value) == MESSAGE and err.value.key == "candidates"
    with pytest.raises(ParamError, match="semantic='softcos'"):
        registry.validate("hybrid", {"candidates": "union", "semantic": "softcos"})
    ok = registry.validate("hybrid", {"candidates": "union", "semantic": "sif"})  # a dense score: accepted
    assert ok["candidates"] == "union" and ok["semantic"] == "sif"


@pytest.fixture
def loci_version(db):
    from benchmarks.services import benchmark_import_545
    from tests.benchmarks.conftest import REF_TYPE, WITH_TEXT

    version, _ = benchmark_import_545(with_text_path=WITH_TEXT, ref_type_path=REF_TYPE, name="loci-similes-545")
    return version


def _file(name, data):
    f = io.BytesIO(data)
    f.name = name
    return f


@pytest.mark.django_db
def test_workbench_form_and_api_refuse_it(client, client_for, users):
    from workbench.models import DetectionRun, Document

    client.force_login(users["researcher"])
    page = client.post("/workbench/", {
        "retriever": "hybrid", "retriever_params": json.dumps(BAD), "top_k": 3, "threshold_cit": 0.5,
        "threshold_cf": 0.5, "unit": "line",
        "query_file": _file("q.csv", b"seg_id,text\na,Arma uirumque cano\n"),
        "source_file": _file("s.csv", b"seg_id,text\nb,Arma uirumque cano\n")})
    assert page.status_code == 200 and MESSAGE in html.unescape(page.content.decode())
    assert not DetectionRun.objects.exists() and not Document.objects.exists()

    api = client_for("researcher")
    docs = []
    for name, text in (("q.csv", b"seg_id,text\na,Arma uirumque cano\n"), ("s.csv", b"seg_id,text\nb,Arma cano\n")):
        docs.append(api.post("/api/v1/workbench/documents/", {"file": _file(name, text)}, format="multipart").json())
    response = api.post("/api/v1/workbench/runs/", {"query_document": docs[0]["id"], "source_document": docs[1]["id"],
                                                    "retriever": "hybrid", "retriever_params": BAD}, format="json")
    assert response.status_code == 400 and MESSAGE in json.dumps(response.json(), ensure_ascii=False)
    assert not DetectionRun.objects.exists() and not Job.objects.exists()


@pytest.mark.django_db
def test_detection_job_and_evaluation_api_refuse_it(client_for, loci_version):
    from benchmarks.models import EvaluationRun
    from detection.methods.specs import ParamError  # the registry's error reaches the caller unwrapped (one error type)
    from detection.services.detection import detection_job_create

    with pytest.raises(ParamError) as err:
        detection_job_create(queries=["corpus", 1], sources=["corpus", 2], method="hybrid", params=BAD, k=10)
    assert MESSAGE in str(err.value)
    api = client_for("researcher")
    response = api.post("/api/v1/benchmarks/runs/", {"version": loci_version.pk, "method": "hybrid",
                                                     "params": BAD}, format="json")
    assert response.status_code == 400 and MESSAGE in json.dumps(response.json(), ensure_ascii=False)
    assert not EvaluationRun.objects.exists() and not Job.objects.exists()


@pytest.mark.django_db
def test_commands_refuse_it(tmp_path, loci_version):
    for name, rows in (("q.csv", "a,Arma uirumque cano\n"), ("s.csv", "b,Arma uirumque cano\n")):
        (tmp_path / name).write_text("seg_id,text\n" + rows, encoding="utf-8")
    with pytest.raises(CommandError) as err:
        call_command("detect", "--query", str(tmp_path / "q.csv"), "--source", str(tmp_path / "s.csv"),
                     "--output", str(tmp_path / "o.csv"), "--method", "hybrid", "--param", "candidates=union",
                     stderr=StringIO())
    assert MESSAGE in str(err.value) and not (tmp_path / "o.csv").exists()
    with pytest.raises(CommandError) as err:
        call_command("evaluate", "--benchmark", loci_version.benchmark.name, "--method", "hybrid",
                     "--param", "candidates=union", stdout=StringIO(), stderr=StringIO())
    assert MESSAGE in str(err.value) and not Job.objects.exists()
