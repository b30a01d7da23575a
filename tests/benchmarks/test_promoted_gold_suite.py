"""Gold a user promoted from verified workbench parallels is a suite benchmark (``stored:NAME@VERSION``) that the
suite job and ``evaluate --suite`` run and a ranker trains on; a promoted query the file gave no fold is dealt one."""
import pytest
from django.core.management import call_command

from benchmarks.services import RunError
from benchmarks.services.suite_jobs import SUITE_KIND, stored_suite_benchmark, suite_job_create
from detection.models import TrainedModel
from jobs.models import Job
from jobs.runner import run_job
from workbench.models import Candidate

pytestmark = pytest.mark.django_db


@pytest.fixture
def promoted(loci_version, make_user):
    """Version "2" of loci-similes-545: its gold plus three parallels a lead-researcher confirmed in a real
    bm25-lemma detection over the version's own corpora (two cit., one cf.), promoted with ``gold_promote``."""
    from benchmarks.models import GoldReference
    from workbench.services import detection_run_create, document_from_corpus, gold_promote, verdict_set

    user = make_user("promoter", "lead", "researcher")
    run = detection_run_create(query_document=document_from_corpus(corpus=loci_version.query_corpus),
                               source_document=document_from_corpus(corpus=loci_version.source_corpus),
                               retriever="bm25-lemma", top_k=3, owner=user)
    assert run_job(run.job_id) == "succeeded"
    gold = set(GoldReference.objects.filter(version=loci_version).values_list("query__seg_id", "source__seg_id"))
    new = [c for c in Candidate.objects.filter(run=run).select_related("query", "source").order_by("id")
           if (c.query.seg_id, c.source.seg_id) not in gold][:3]
    for c, decision in zip(new, ("cit.", "cit.", "cf.")):
        verdict_set(candidate=c, user=user, decision=decision, note="confirmed on reading")
    version = gold_promote(run=run, base=loci_version, version="2", user=user)
    assert version.provenance["promoted"]["added"] == 3
    return version, [(c.query.seg_id, c.source.seg_id, d) for c, d in zip(new, ("cit.", "cit.", "cf."))], user


def test_the_promoted_version_is_a_suite_benchmark_with_the_promoted_pairs(promoted, loci_version):
    version, added, user = promoted
    key = "stored:loci-similes-545@2"
    bench = stored_suite_benchmark(key, user)
    base = stored_suite_benchmark("stored:loci-similes-545@1", user)
    assert bench.describe()["gold_pairs"] == base.describe()["gold_pairs"] + 3
    for q, s, decision in added:  # typed as the verdict said, in the benchmark's queries and folds
        assert bench.gold[q][s] == {"cit.": 1, "cf.": 2}[decision] and q in bench.folds
    assert bench.typed and bench.pool == "corpus" and len(bench.source_ids) == loci_version.source_corpus.segments.count()
    assert any("promoted from workbench detection run" in n for n in bench.notes)
    with pytest.raises(RunError, match="no stored version 'stored:loci-similes-545@9'"):
        stored_suite_benchmark("stored:loci-similes-545@9", user)


def test_the_suite_job_runs_a_ranker_on_promoted_gold_and_a_ranker_trains_on_it(promoted, users, models_dir,
                                                                                  client, capsys):
    version, added, user = promoted
    key = "stored:loci-similes-545@2"
    client.force_login(user)
    assert key in client.get("/benchmarks/suite/").content.decode()  # offered on the suite page
    job = suite_job_create(methods="bm25-lemma,bm25-lemma>feature-ltr", benchmarks=[key], owner=user)
    assert run_job(job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    job.refresh_from_db()
    rows = job.result["rows"][key]
    assert rows["bm25-lemma>feature-ltr"]["leaked_queries"] == 0
    assert rows["bm25-lemma>feature-ltr"]["n_queries"] == rows["bm25-lemma"]["n_queries"]
    assert 0 < rows["bm25-lemma"]["mean"]["RR@10"] <= 1 and rows["bm25-lemma>feature-ltr"]["vs_first"]["RR@10"]
    assert job.result["benchmarks"][key]["gold_pairs"] == stored_suite_benchmark(key, user).describe()["gold_pairs"]
    # the command reads it from the database too
    call_command("evaluate", "--suite", "--methods", "bm25-lemma", "--benchmarks", key)
    out = capsys.readouterr().out
    assert f"| {key} | bm25-lemma | " in out  # the same figure as the job's row
    assert f"| {rows['bm25-lemma']['mean']['RR@10']:.3f} |" in out.split(f"| {key} | bm25-lemma | ")[1].split("\n")[0]
    # a ranker trains on the promoted gold: one model per fold, its training queries include the promoted ones
    call_command("train_model", "--benchmark", "loci-similes-545", "--benchmark-version", "2", "--name",
                 "ltr-promoted", "--k", "10")
    all_model = TrainedModel.objects.get(name="ltr-promoted/all")
    assert "loci-similes-545 v2" in all_model.benchmark
    import json

    card = json.loads((models_dir / "ltr-promoted" / "all" / "reranker.json").read_text())
    assert {q for q, _, _ in added} <= set(card["training_queries"])


def test_another_users_unapproved_promotion_is_not_theirs_to_run(loci_version, make_user):
    from workbench.services import detection_run_create, document_from_corpus, gold_promote, verdict_set

    proposer = make_user("proposer", "researcher")
    run = detection_run_create(query_document=document_from_corpus(corpus=loci_version.query_corpus),
                               source_document=document_from_corpus(corpus=loci_version.source_corpus),
                               retriever="bm25-lemma", top_k=1, owner=proposer)
    assert run_job(run.job_id) == "succeeded"
    verdict_set(candidate=Candidate.objects.filter(run=run).first(), user=proposer, decision="cit.")
    gold_promote(run=run, base=loci_version, version="2-proposed", user=proposer)
    key = "stored:loci-similes-545@2-proposed"
    assert suite_job_create(methods="bm25-lemma", benchmarks=[key], owner=proposer).kind == SUITE_KIND
    with pytest.raises(RunError, match="no stored version"):
        suite_job_create(methods="bm25-lemma", benchmarks=[key], owner=make_user("other", "researcher"))


def test_a_query_the_file_gave_no_fold_is_dealt_one():
    from benchmarks.loci import data as D
    from benchmarks.loci import splits as S

    segs = [D.Segment(f"q{i}", "t", "", "", "") for i in range(7)]
    src = [D.Segment("s", "t", "", "", "")]
    raw = [D.GoldLink(f"q{i}", "s", "cit.", f"p{i}", i % 2 if i < 4 else None, "") for i in range(7)]
    folds = {f"q{i}": i % 2 for i in range(4)}
    bench = D.Benchmark("b", segs, src, D.merge_links(raw), raw, {"db": folds})
    assert S.split_from_file(bench, "db").query_fold == folds  # the file's own split leaves q4-q6 out
    split = S.stored_split(bench, "db")
    assert {q: f for q, f in split.query_fold.items() if q in folds} == folds
    assert set(split.query_fold) == {f"q{i}" for i in range(7)} and set(split.query_fold.values()) == {0, 1}
    assert "3 citing queries without a fold" in split.notes[-1] and split.n_folds == 2
    assert S.stored_split(bench, "db").query_fold == split.query_fold  # deterministic
