"""Evaluation runs with a unit (issue 24): a verse benchmark searched as windows of lines or as sentences, each
hit scored on the lines it covers; one declaration of the unit (core/run_limits.py), so a bad unit gets one
message from the page, the API and ``manage.py evaluate``; a unit a benchmark's segments cannot take is refused
with a sentence."""
import csv
import html
import json
import re

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from benchmarks.loci import unit_ranking as U
from benchmarks.models import EvaluationRun
from core.paths import shared_data_dir
from core.run_limits import EVALUATION_UNIT
from detection.latin.readers import read_tess

TESS = shared_data_dir() / "latin_texts" / "tesserae"
QUERY_REFS = [f"2.{i}" for i in range(4, 16)]
SOURCE_REFS = ([f"1.{i}" for i in range(250, 263)] + [f"2.{i}" for i in range(240, 251)]
               + [f"4.{i}" for i in range(445, 451)] + [f"7.{i}" for i in range(300, 330)]
               + [f"10.{i}" for i in range(495, 506)])
# commentary parallels of Lucan 2.11-2.14 (shared/data/lucan_vergil/all_lucan.txt), each query with its fold
GOLD = [("luc. 2.11", "verg. aen. 1.257", 0), ("luc. 2.11", "verg. aen. 7.314", 0),
        ("luc. 2.13", "verg. aen. 4.448", 1), ("luc. 2.14", "verg. aen. 10.501", 0),
        ("luc. 2.14", "verg. aen. 2.246", 0)]


def _lines(stem, prefix, refs):
    text = {u.ref: u.text for u in read_tess(TESS / f"{stem}.tess")}
    return [(f"{prefix} {r}", text[r]) for r in refs]


@pytest.fixture
def verse_lines():
    if not TESS.exists():
        pytest.skip("shared data not available")
    return (_lines("lucan.bellum_civile", "luc.", QUERY_REFS),
            _lines("vergil.aeneid", "verg. aen.", SOURCE_REFS))


@pytest.fixture
def verse_version(db, tmp_path, verse_lines):
    return import_verse_version(tmp_path, *verse_lines)


def import_verse_version(tmp_path, queries, sources):
    """A stored benchmark of Lucan 2.4-2.15 → Aeneid lines with five commentary parallels (``lucan-test``)."""
    from benchmarks.services import benchmark_import_files

    paths = {}
    for name, rows, header in (("queries", queries, ["seg_id", "text"]), ("sources", sources, ["seg_id", "text"]),
                               ("gold", [(q, s, "", f) for q, s, f in GOLD], ["query_id", "source_id", "label",
                                                                           "fold"])):
        paths[name] = tmp_path / f"{name}.csv"
        with open(paths[name], "w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            writer.writerows(rows)
    version, _ = benchmark_import_files(queries_path=paths["queries"], sources_path=paths["sources"],
                                        gold_path=paths["gold"], name="lucan-test")
    return version


# ------------------------------------------------------------------------------------------------ pure
def test_lines_follow_when_only_their_last_number_grows_by_one():
    assert U.follows("luc. 2.5", "luc. 2.6") and U.follows("verg. aen. 7.329", "verg. aen. 7.330")
    assert not U.follows("luc. 2.5", "luc. 3.6") and not U.follows("luc. 2.5", "luc. 2.7")
    assert not U.follows("hier. epist. 21.2.5.1", "hier. epist. 117.7.1.1")
    ids = ["verg. aen. 1.261", "verg. aen. 1.262", "verg. aen. 2.240", "verg. aen. 2.241", "verg. aen. 2.250"]
    assert U.runs_of_lines(ids) == [[0, 1], [2, 3], [4]]


def test_windows_cover_their_lines_and_never_cross_a_gap(verse_lines):
    queries, sources = verse_lines
    plan = U.unit_plan("window-2", pool_ids=[s for s, _ in sources], pool_texts=[t for _, t in sources],
                       query_corpus_ids=[q for q, _ in queries], query_corpus_texts=[t for _, t in queries],
                       queries=["luc. 2.14", "luc. 2.11"])
    assert len(plan.pool_ids) == len(sources)  # a window starts on every line
    pos = {s: i for i, (s, _) in enumerate(sources)}
    assert plan.pool_cover[pos["verg. aen. 7.313"]] == [pos["verg. aen. 7.313"], pos["verg. aen. 7.314"]]
    # aen. 1.262 is followed by aen. 2.240 in the pool: not its next line, so its window is the line alone
    assert plan.pool_cover[pos["verg. aen. 1.262"]] == [pos["verg. aen. 1.262"]]
    assert plan.pool_texts[pos["verg. aen. 1.262"]] == sources[pos["verg. aen. 1.262"]][1].strip()
    # the held-out queries' windows, in text order (2.11 before 2.14), each the one starting on its query
    texts = dict(queries)
    assert plan.query_texts == [f"{texts['luc. 2.11'].strip()}\n{texts['luc. 2.12'].strip()}",
                                f"{texts['luc. 2.14'].strip()}\n{texts['luc. 2.15'].strip()}"]
    assert plan.query_units == [[1], [0]]
    # a window hit is scored on the lines it covers: the hit on window 7.313-7.314, then the one on 7.314-7.315
    hits = np.array([[pos["verg. aen. 7.313"], pos["verg. aen. 7.314"], -1], [-1, -1, -1]])
    idx, sc = U.expand(plan, [1], hits, np.array([[3.0, 2.0, -np.inf], [0, 0, 0]]), {0: 0, 1: 1}, depth=4)
    assert idx[0].tolist() == [pos["verg. aen. 7.313"], pos["verg. aen. 7.314"], pos["verg. aen. 7.315"], -1]
    assert sc[0].tolist()[:3] == [3.0, 3.0, 2.0]


def test_sentences_cover_every_query_line_they_touch(verse_lines):
    queries, sources = verse_lines
    plan = U.unit_plan("sentence", pool_ids=[s for s, _ in sources], pool_texts=[t for _, t in sources],
                       query_corpus_ids=[q for q, _ in queries], query_corpus_texts=[t for _, t in queries],
                       queries=["luc. 2.11", "luc. 2.13"])
    # Lucan 2.7-2.15 is one sentence ("Sive parens ... fati."): both held-out lines are covered by it
    assert plan.query_units[0] == plan.query_units[1] and len(plan.query_units[0]) == 1
    assert "Fatorum immoto" in plan.query_texts[plan.query_units[0][0]]
    assert all(len(c) >= 1 for c in plan.pool_cover)


def test_a_prose_or_scattered_benchmark_is_refused_with_a_sentence(verse_lines):
    from benchmarks.loci.data import pairs_545_from_rows
    from core.paths import shared_data_dir as shared

    queries, sources = verse_lines
    assert U.unit_problem("window-2", name="lucan", side="query segments", ids=[q for q, _ in queries],
                          texts=[t for _, t in queries]) is None
    assert U.unit_problem("line", name="x", side="y", ids=["a"], texts=["b."]) is None
    # the cited lines alone (a gold pool): separate passages
    scattered = U.unit_problem("window-3", name="lucan", side="segments of its gold pool",
                               ids=["verg. aen. 1.257", "verg. aen. 7.314", "verg. aen. 4.448"],
                               texts=["a", "b", "c"])
    assert scattered.startswith("unit 'window-3' joins a line with the lines after it, but only 0 of the 3 "
                                "segments of its gold pool of lucan are followed by their next line")
    # prose sentences in text order (Cicero's Brutus, cut into sentences): they follow each other but end a sentence
    rows = list(csv.DictReader(open(shared() / "locisimiles" / "pairs_545_with_text.csv", encoding="utf-8")))
    bench = pairs_545_from_rows(rows, [], name="loci")
    q = [s.seg_id for s in bench.queries]
    assert "separate passages" in U.unit_problem("sentence", name="loci", side="query segments", ids=q,
                                                 texts=[s.text for s in bench.queries])
    prose = [f"cic. brut. 1.{i}" for i in range(1, 6)]
    said = U.unit_problem("window-2", name="brutus", side="query segments", ids=prose,
                          texts=["Cum e Cilicia decedens Rhodum venissem.", "Et eo mihi de Q. Hortensi morte esset "
                                 "adlatum.", "Opinione omnium maiorem animo cepi dolorem.", "Nam et amico amisso.",
                                 "Et interitu talis auguris dignitatem nostri conlegi deminutam dolebam."])
    assert "5 of the 5 query segments of brutus end a sentence: they are sentences already (prose)" in said


# ------------------------------------------------------------------------------------------------ runs
def _page_post(client, version, **fields):
    data = {"method": "bm25-lemma", "params": "{}", "reranker": "", "pool": "corpus", "ks": "1, 10",
            "split": "file", "n_folds": "5", "seed": "0", **fields}
    return client.post(f"/benchmarks/versions/{version.pk}/", data)


@pytest.mark.django_db
@pytest.mark.parametrize("unit", ["verse", "window-4", ""])
def test_a_bad_unit_gets_one_message_from_page_api_and_command(client, client_for, users, verse_version, unit):
    expected = EVALUATION_UNIT.message(unit)
    assert expected.startswith("unit must be one of line, window-2, window-3, sentence, not ")
    api = client_for("researcher").post("/api/v1/benchmarks/runs/", {
        "version": verse_version.pk, "method": "bm25-lemma", "unit": unit}, format="json")
    assert api.status_code == 400 and api.json()["unit"] == [expected]
    client.force_login(users["researcher"])
    if unit:  # an empty unit on the page is the default (a select sends one of its options)
        page = _page_post(client, verse_version, unit=unit)
        assert page.status_code == 200 and expected in html.unescape(page.content.decode())
        with pytest.raises(CommandError) as command:
            call_command("evaluate", "--benchmark", "lucan-test", "--method", "bm25-lemma", "--unit", unit)
        assert str(command.value) == expected
    assert EvaluationRun.objects.count() == 0


@pytest.mark.django_db
def test_windows_on_a_prose_benchmark_are_refused_everywhere_alike(client, client_for, users, loci_version):
    from benchmarks.services.runs import RunError, check_unit_fits

    with pytest.raises(RunError) as caught:
        check_unit_fits(loci_version, "window-2", "gold")
    expected = str(caught.value)
    assert "of loci-similes-545 v1 are followed by their next line" in expected and "unit 'line'" in expected
    api = client_for("researcher").post("/api/v1/benchmarks/runs/", {
        "version": loci_version.pk, "method": "bm25-lemma", "unit": "window-2"}, format="json")
    assert api.status_code == 400 and api.json()["detail"] == expected
    client.force_login(users["researcher"])
    page = _page_post(client, loci_version, unit="window-2", pool="gold")
    assert page.status_code == 200 and expected in html.unescape(page.content.decode())
    with pytest.raises(CommandError) as command:
        call_command("evaluate", "--benchmark", "loci-similes-545", "--method", "bm25-lemma", "--unit", "window-2")
    assert str(command.value) == expected
    assert EvaluationRun.objects.count() == 0


def _expected_recall(verse_lines, unit, ks):
    """Recall@k over the gold queries computed another way: the detect command's own unit code (windows over the
    whole texts, hits listed on their lines by ``line_rankings``)."""
    from detection.latin.units import line_rankings, make_units
    from detection.methods import registry

    queries, sources = verse_lines
    s_units = []
    for run in U.runs_of_lines([s for s, _ in sources]):
        s_units += make_units([sources[i][0] for i in run], [sources[i][1] for i in run], unit)
    q_units = make_units([q for q, _ in queries], [t for _, t in queries], unit)
    r = registry.build("bm25-lemma").fit([u.id for u in s_units], [u.text for u in s_units])
    top = r.search([u.text for u in q_units], len(s_units))
    ranked, _ = line_rankings(q_units, s_units, top.indices, top.scores, depth=len(sources))
    gold, fold = {}, {}
    for q, s, f in GOLD:
        gold.setdefault(q, set()).add(s)
        fold[q] = f
    per_fold = {f: [q for q in gold if fold[q] == f] for f in set(fold.values())}  # the report: a mean of folds
    return {k: float(np.mean([np.mean([len(set(ranked[q][:k]) & gold[q]) / len(gold[q]) for q in qs])
                              for qs in per_fold.values()])) for k in ks}


@pytest.mark.django_db
def test_an_evaluation_searches_windows_and_scores_the_lines_they_cover(client, users, verse_version, verse_lines,
                                                                         tmp_path):
    out = tmp_path / "report.json"
    call_command("evaluate", "--benchmark", "lucan-test", "--method", "bm25-lemma", "--unit", "window-2",
                 "--pool", "corpus", "--ks", "1,3,10", "--output", str(out))
    run = EvaluationRun.objects.get()
    assert run.unit == "window-2" and run.job.status == "succeeded"
    report = json.loads(out.read_text())
    assert report["unit"] == "window-2"
    expected = _expected_recall(verse_lines, "window-2", (1, 3, 10))
    assert {k: run.summary[f"recall@{k}"] for k in (1, 3, 10)} == pytest.approx(expected)
    client.force_login(users["researcher"])
    page = html.unescape(client.get(f"/benchmarks/runs/{run.pk}/").content.decode())
    shown = " ".join(re.sub(r"<[^>]+>", "", page.split('id="run-unit"', 1)[1]).split())
    assert shown.startswith(">unit window-2 (each hit scored on the segments it covers")
    assert client.get(f"/api/v1/benchmarks/runs/{run.pk}/").json()["unit"] == "window-2"


@pytest.mark.django_db
def test_a_sharded_sentence_run_equals_a_one_process_run(verse_version):
    """Sentences over the verse lines, ranked in two shards (the plan writes the units for the shards), give the
    report of one shard."""
    from benchmarks.services import evaluation_run_create
    from jobs.models import Job
    from jobs.runner import run_job

    summaries = []
    for shards in (1, 2):
        run = evaluation_run_create(version=verse_version, method="bm25-lemma", unit="sentence", pool="corpus",
                                    ks=[1, 10], shards=shards, enqueue=False)
        run_job(run.job_id)
        for shard in Job.objects.filter(parent_id=run.job_id).order_by("shard_index"):
            run_job(shard.pk)
        run.refresh_from_db()
        assert run.job.status == "succeeded", run.job.error
        summaries.append({k: v for k, v in run.summary.items() if "@" in k})
    assert summaries[0] == summaries[1] and summaries[0]["recall@10"] > 0
