"""A ranker over the ``channels`` first stage trained by ``manage.py train_model`` learns from the channels'
per-candidate signals, as the suite's does (one code path: ``pipeline.search_with_signals``); its model card names
the first stage, its configuration and the signals (JSON, no pickle). ``detect`` and a workbench run give it the
same signals, so the same candidates get the same scores both ways; a first stage without them is refused, in a
sentence naming what is missing, by the command, the workbench and an evaluation run."""
import csv
import io
import json
import math

import numpy as np
import pytest
from django.core.management import call_command

from benchmarks.suite import suite as S
from core.cli import CommandInputError
from core.paths import shared_data_dir
from detection.channels.channel_features import SIGNALS
from detection.methods import ParamError, registry

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(not (shared_data_dir() / "locisimiles").is_dir(),
                                 reason="shared data folder not here")]

MISSING = (r"feature-ltr model ltr-ch/all learned from the first stage's channel_lemma, channel_rare, .*channel_context, "
           r"which these candidates \(bm25-lemma\) do not carry: use it after the first stage channels")


def _csv(ids, texts) -> bytes:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["seg_id", "text"])
    w.writerows(zip(ids, texts))
    return out.getvalue().encode("utf-8")


def test_a_channels_ranker_trained_by_the_command_reranks_the_same_through_detect_and_the_workbench(
        loci_version, models_dir, users, tmp_path):
    from jobs.models import Job
    from jobs.runner import run_job
    from workbench.models import Candidate
    from workbench.services import detection_run_create, document_upload

    call_command("train_model", "--benchmark", loci_version.benchmark.name, "--name", "ltr-ch", "--k", "10",
                 "--retriever", "channels", "--retriever-param", "profile=prose", "--param", "anchor=true")
    model = models_dir / "ltr-ch"
    card = json.loads((model / "all" / "reranker.json").read_text())
    assert card["first_stage"] == "channels" and card["first_stage_config"] == {"profile": "prose"}
    assert card["first_stage_features"] == list(SIGNALS) and card["feature_names"][-len(SIGNALS):] == list(SIGNALS)
    clf = json.loads((model / "all" / "classifier.json").read_text())
    assert clf["kind"] == "feature-ltr" and len(clf["w"]) == len(card["feature_names"]) == 20 + len(SIGNALS)
    # the anchor (the fused score) is free; the channels' scores got weights of their own
    assert clf["anchor"] == card["feature_names"].index("retrieval_score")
    assert np.abs(np.asarray(clf["w"])[-len(SIGNALS):]).max() > 0
    assert json.loads((model / "fold-0" / "reranker.json").read_text())["first_stage_features"] == list(SIGNALS)
    assert "with 12 first-stage signals (channel_lemma" in Job.objects.get().log
    assert not list(model.rglob("*.pkl"))

    # a few dozen real Loci Similes segments: 24 citing passages, their gold sources and as many others
    loci = S.loci_benchmark()
    qids, qtexts = loci.query_ids[:24], loci.query_texts[:24]
    gold = {s for q in qids for s in loci.gold[q]}
    keep = [j for j, s in enumerate(loci.source_ids) if s in gold][:30]
    keep += [j for j in range(len(loci.source_ids)) if j not in keep][:60 - len(keep)]
    sids, stexts = [loci.source_ids[j] for j in keep], [loci.source_texts[j] for j in keep]
    (tmp_path / "q.csv").write_bytes(_csv(qids, qtexts))
    (tmp_path / "s.csv").write_bytes(_csv(sids, stexts))
    from detection.commands import run_detect

    log = io.StringIO()
    run_detect(query=str(tmp_path / "q.csv"), source=str(tmp_path / "s.csv"), output=str(tmp_path / "out.csv"),
               method="channels", params={"profile": "prose"}, top_k=10, cache_dir=tmp_path / "cache",
               reranker="feature-ltr", reranker_params={"model": "ltr-ch/all"}, stream=log)
    assert "warning" not in log.getvalue()  # the first stage it learned from, with the signals it learned from
    with open(tmp_path / "out.csv", encoding="utf-8") as fh:
        by_detect = {(r["query_id"], r["source_id"]): r for r in csv.DictReader(fh)}
    assert len(by_detect) == 24 * 10

    owner = users["researcher"]
    qdoc = document_upload(name="q.csv", data=_csv(qids, qtexts), owner=owner)
    sdoc = document_upload(name="s.csv", data=_csv(sids, stexts), owner=owner)
    run = detection_run_create(query_document=qdoc, source_document=sdoc, retriever="channels",
                               retriever_params={"profile": "prose"}, top_k=10, reranker="feature-ltr",
                               reranker_params={"model": "ltr-ch/all"}, owner=owner)
    assert run_job(run.job_id) == "succeeded", Job.objects.get(pk=run.job_id).error
    rows = Candidate.objects.filter(run=run).select_related("query", "source")
    by_run = {(c.query.seg_id, c.source.seg_id): c for c in rows}
    assert set(by_run) == set(by_detect)
    for pair, c in by_run.items():  # the same candidates, the same retrieval and class scores both ways
        d = by_detect[pair]
        assert [f"{x:.6g}" for x in (c.p_none, c.p_cit, c.p_cf)] == [
            f"{float(d[k]):.6g}" for k in ("p_none", "p_cit", "p_cf")], pair
        assert float(d["retrieval_score"]) == pytest.approx(c.score, rel=1e-6) and int(d["retrieval_rank"]) == c.rank
        # the reranked rows keep their explanation; the score is the log-odds of a reference, never a saturated 1
        assert json.loads(d["explain"])["channels"], pair
        odds = (float(d["p_cit"]) + float(d["p_cf"])) / float(d["p_none"])
        assert float(d["score"]) == pytest.approx(math.log(odds), rel=1e-4, abs=1e-4), pair
    assert not Job.objects.get(pk=run.job_id).result["warnings"]
    # the reranked order is not the channels' own: the signals moved some candidates
    assert any(int(d["rank"]) != int(d["retrieval_rank"]) for d in by_detect.values())

    # the same model after the verse profile: it says what it was trained on, in the command and the job's check
    log = io.StringIO()
    run_detect(query=str(tmp_path / "q.csv"), source=str(tmp_path / "s.csv"), output=str(tmp_path / "v.csv"),
               method="channels", params={"profile": "verse"}, top_k=10, cache_dir=tmp_path / "cache",
               reranker="feature-ltr", reranker_params={"model": "ltr-ch/all"}, stream=log, explain="none")
    said = "warning: model ltr-ch/all was trained on channels with profile prose, not verse"
    assert log.getvalue().count(said) == 1
    from detection.methods.rerank.rerankers import card_check

    defaults = registry.get_spec("channels").defaults()
    check = card_check("feature-ltr", {"model": "ltr-ch/all"}, "channels", ["cit."], {"profile": "verse"}, "line",
                       defaults)
    assert any(w.startswith("model ltr-ch/all was trained on channels with profile prose, not verse")
               for w in check["warnings"])
    same = card_check("feature-ltr", {"model": "ltr-ch/all"}, "channels", ["cit."], {"profile": "prose"}, "line",
                      defaults)
    assert not [w for w in same["warnings"] if "profile" in w]

    # a first stage that gives none of those signals is refused before any work, naming what is missing
    with pytest.raises(CommandInputError, match=MISSING):
        run_detect(query=str(tmp_path / "q.csv"), source=str(tmp_path / "s.csv"), output=str(tmp_path / "o2.csv"),
                   method="bm25-lemma", top_k=10, cache_dir=tmp_path / "cache", reranker="feature-ltr",
                   reranker_params={"model": "ltr-ch/all"}, stream=io.StringIO())
    assert not (tmp_path / "o2.csv").exists()
    n_runs = type(run).objects.count()
    with pytest.raises(ParamError, match=MISSING):
        detection_run_create(query_document=qdoc, source_document=sdoc, retriever="bm25-lemma", top_k=10,
                             reranker="feature-ltr", reranker_params={"model": "ltr-ch/all"}, owner=owner)
    assert type(run).objects.count() == n_runs
    from benchmarks.services.runs import evaluation_run_create

    with pytest.raises(ParamError, match=MISSING.replace("ltr-ch/all", "ltr-ch")):
        evaluation_run_create(version=loci_version, method="bm25-lemma", reranker="feature-ltr",
                              reranker_params={"model": "ltr-ch"}, enqueue=False)


@pytest.mark.django_db(transaction=True)  # the form's job is sent when the request's transaction commits
def test_the_models_page_form_trains_over_channels_and_an_evaluation_run_reranks_with_the_signals(
        loci_version, models_dir, users, client):
    from benchmarks.services.runs import evaluation_run_create
    from jobs.models import Job
    from jobs.runner import run_job

    client.force_login(users["researcher"])
    response = client.post("/benchmarks/models/", {
        "version": loci_version.pk, "name": "ltr-form-ch", "kind": "feature-classifier", "method": "feature-ltr",
        "params": '{"anchor": true}', "retriever": "channels", "retriever_params": '{"profile": "prose"}',
        "k": "10", "final_model": ""})
    assert response.status_code == 302
    job = Job.objects.get()
    assert job.status == "succeeded", job.error  # the test settings run jobs in-process
    card = json.loads((models_dir / "ltr-form-ch" / "fold-2" / "reranker.json").read_text())
    assert card["first_stage"] == "channels" and card["first_stage_features"] == list(SIGNALS)
    # an evaluation run reranks channels' candidates with each fold's stored model, given the same signals
    run = evaluation_run_create(version=loci_version, method="channels", params={"profile": "prose"},
                                reranker="feature-ltr", reranker_params={"model": "ltr-form-ch"}, ks=[1, 10],
                                owner=users["researcher"], enqueue=False)
    assert run_job(run.job_id) == "succeeded", Job.objects.get(pk=run.job_id).error
    run.refresh_from_db()
    rerank = run.report["rerank"]
    assert all(f["leaked_queries"] == 0 for f in rerank["folds"]) and len(rerank["folds"]) == 5
    # each fold's model learned on the other folds (the training log: rerank above retrieval on every fold)
    assert rerank["rerank"]["mrr@10"] > rerank["retrieval"]["mrr@10"]
