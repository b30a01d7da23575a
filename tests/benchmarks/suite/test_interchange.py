"""Runs in and out on real data: metrics checked against ir-measures (pytrec_eval) on real runs, TREC/qrels/BEIR
export read back by ir-measures, and the five imports (Tesserae CSV and XML, locisimiles, passim, TREC) mapped
onto real benchmarks, with the bad inputs the issue names."""
import csv
import json
import math
from pathlib import Path

import ir_measures
import pytest
from ir_measures import RR, R, nDCG

from benchmarks.suite import interchange as IX
from benchmarks.suite import measures as MS
from benchmarks.suite import suite as S
from core.paths import shared_data_dir

DATA = Path(__file__).parent / "data"
PKG = shared_data_dir() / "locisimiles" / "package_examples"
needs_data = pytest.mark.skipif(not (shared_data_dir() / "lucan_vergil" / "all_lucan.txt").is_file(),
                                reason="shared data folder not here")
IRM = {"R@1": R @ 1, "R@10": R @ 10, "R@100": R @ 100, "R@1000": R @ 1000, "RR@10": RR @ 10,
       "nDCG@10": nDCG @ 10}


@pytest.fixture(scope="module")
def loci():
    return S.loci_benchmark()


@pytest.fixture(scope="module")
def loci_runs(loci):
    cache = {}
    return {name: S.run_method(name, loci, {"loci-similes": loci}, 1000, cache).ranked
            for name in ("bm25-lemma", "tfidf-surface", "rrf:bm25-lemma+tfidf-surface")}


def _oracle(ranked, gold, view):
    """ir-measures per query; the run's order is given as strictly decreasing scores so no tie-break applies."""
    want = {"all": None, "cit.": 1, "cf.": 2}[view]
    qrels = {q: {s: 1 for s, c in g.items() if want is None or c == want} for q, g in gold.items()}
    qrels = {q: d for q, d in qrels.items() if d}
    run = {q: {s: float(len(v) - i) for i, (s, _) in enumerate(v)} for q, v in ranked.items()}
    out = {}
    for m in ir_measures.iter_calc(list(IRM.values()), qrels, run):
        out.setdefault(str(m.measure), {})[m.query_id] = m.value
    return out


@needs_data
def test_every_metric_agrees_with_ir_measures_on_real_runs(loci, loci_runs):
    for name, ranked in loci_runs.items():
        order = {q: [s for s, _ in v] for q, v in ranked.items()}
        for view in ("all", "cit.", "cf."):
            ours = MS.per_query(order, loci.gold, list(IRM), view)
            theirs = _oracle(ranked, loci.gold, view)
            for m, irm in IRM.items():
                assert set(ours[m]) == set(theirs[str(irm)]), (name, view, m)
                worst = max(abs(ours[m][q] - theirs[str(irm)][q]) for q in ours[m])
                assert worst < 1e-9, (name, view, m, worst)
    # and the figures are not trivial: BM25-lemma against the 408 gold sources (docs/loci_benchmark.md: 0.876)
    order = {q: [s for s, _ in v] for q, v in loci_runs["bm25-lemma"].items()}
    assert 0.85 < MS.mean(MS.per_query(order, loci.gold, ["RR@10"])["RR@10"]) < 0.90


@needs_data
def test_trec_run_and_qrels_round_trip_through_ir_measures(loci, loci_runs, tmp_path):
    ranked = loci_runs["bm25-lemma"]
    text = IX.trec_run_text(ranked, "bm25", scores="rank")
    first = text.splitlines()[0].split()
    assert first[1] == "Q0" and first[3] == "1" and first[5] == "bm25" and "%20" in first[0]
    (tmp_path / "run.txt").write_text(text)
    (tmp_path / "qrels.txt").write_text(IX.qrels_text(loci.gold))
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "qrels.txt")))
    assert len(qrels) == sum(len(g) for g in loci.gold.values())
    theirs = {str(m): v for m, v in ir_measures.calc_aggregate(
        list(IRM.values()), ir_measures.read_trec_qrels(str(tmp_path / "qrels.txt")),
        ir_measures.read_trec_run(str(tmp_path / "run.txt"))).items()}
    # ir-measures sees the encoded ids; decoded by our reader they map back to the benchmark's segments
    back = IX.to_benchmark(IX.read_run("trec", text), loci.query_ids, loci.source_ids, strict=True)
    order = back.ranked
    assert [s for s, _ in order[loci.query_ids[0]]] == [s for s, _ in IX.ordered(ranked)[loci.query_ids[0]]]
    ours = MS.per_query({q: [s for s, _ in v] for q, v in order.items()}, loci.gold, list(IRM))
    for m, irm in IRM.items():
        assert abs(MS.mean(ours[m]) - theirs[str(irm)]) < 1e-9
    # the method's own scores: ranks stay sequential and the same bytes come out twice
    text2 = IX.trec_run_text(ranked, "bm25")
    assert text2 == IX.trec_run_text(ranked, "bm25")
    for q in list(ranked)[:5]:
        ranks = [int(line.split()[3]) for line in text2.splitlines() if line.split()[0] == IX._enc(q)]
        assert ranks == list(range(1, len(ranks) + 1))


def test_tie_break_keeps_the_methods_order():
    ranked = {"q": [("b", 1.0), ("a", 2.0), ("c", 1.0), ("d", 1.0)]}
    assert [s for s, _ in IX.ordered(ranked)["q"]] == ["a", "b", "c", "d"]
    ranked = {"q": [("d", 1.0), ("c", 1.0)]}
    assert [line.split()[2] for line in IX.trec_run_text(ranked).splitlines()] == ["d", "c"]


@needs_data
def test_beir_folder_of_a_fold(loci, tmp_path):
    fold0 = [q for q in loci.query_ids if loci.folds[q] == 0]
    texts = dict(zip(loci.query_ids, loci.query_texts))
    files = IX.write_beir(tmp_path, query_ids=fold0, query_texts=[texts[q] for q in fold0],
                          source_ids=loci.source_ids, source_texts=loci.source_texts, gold=loci.gold)
    assert files == ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "qrels/cit.tsv", "qrels/cf.tsv"]
    corpus = [json.loads(line) for line in (tmp_path / "corpus.jsonl").read_text().splitlines()]
    assert len(corpus) == len(loci.source_ids) and set(corpus[0]) == {"_id", "title", "text"}
    rows = list(csv.reader((tmp_path / "qrels" / "test.tsv").open(), delimiter="\t"))
    assert rows[0] == ["query-id", "corpus-id", "score"]
    assert len(rows) - 1 == sum(len(loci.gold[q]) for q in fold0)


@pytest.fixture(scope="module")
def lucan():
    return S.lucan_benchmark()


@needs_data
def test_tesserae_csv_and_xml_map_onto_lucan_vergil(lucan):
    # the text numbers seven lines twice; the suite keeps one query per id (a repeated id would merge two lists)
    assert len(set(lucan.query_ids)) == len(lucan.query_ids) == 617
    assert "luc. 7.866" in lucan.notes[1]
    for fmt, name in (("tesserae-csv", "tesserae_v3_lucan.csv"), ("tesserae-xml", "tesserae_v3_lucan.xml")):
        rows = IX.read_run(fmt, (DATA / name).read_text())
        imp = IX.to_benchmark(rows, lucan.query_ids, lucan.source_ids)
        assert [s for s, _ in imp.ranked["luc. 2.5"]] == ["verg. aen. 12.85", "verg. aen. 4.1"]
        rep = imp.report()
        if fmt == "tesserae-csv":  # luc. 1.1: book 1 is not a query of the benchmark, counted and listed
            assert rep["unmatched_queries"] == {"count": 1, "distinct": 1, "listed": ["luc. 1.1"]}
        order = {q: [s for s, _ in v] for q, v in imp.ranked.items()}
        rr = MS.per_query(order, lucan.gold, ["RR@10"])["RR@10"]
        assert rr["luc. 2.5"] == 1.0  # its gold source 12.85 comes first
        with pytest.raises(IX.InterchangeError, match="line 20: unknown query 'luc. 1.1'"):
            if fmt == "tesserae-csv":
                IX.to_benchmark(rows, lucan.query_ids, lucan.source_ids, strict=True)
            else:
                raise IX.InterchangeError(20, "unknown query 'luc. 1.1'")


@needs_data
def test_locisimiles_results_file_of_the_package():
    """The package's own results.csv against the benchmark its example files define."""
    def seg(path):
        return {r["seg_id"]: r["text"] for r in csv.DictReader(path.open(encoding="utf-8"))}

    queries, sources = seg(PKG / "hieronymus_samples.csv"), seg(PKG / "vergil_samples.csv")
    gold = {}
    for r in csv.DictReader((PKG / "ground_truth.csv").open(encoding="utf-8")):
        if r["label"] == "1":
            gold.setdefault(r["query_id"], {})[r["source_id"]] = 1
    rows = IX.read_run("locisimiles", (PKG / "results.csv").read_text(encoding="utf-8"))
    imp = IX.to_benchmark(rows, queries, sources, strict=True)
    assert imp.n_matched == len(rows) == 110
    order = {q: [s for s, _ in v] for q, v in imp.ranked.items()}
    ours = MS.per_query(order, gold, list(IRM))
    theirs = _oracle(imp.ranked, gold, "all")
    for m, irm in IRM.items():
        assert max(abs(ours[m][q] - theirs[str(irm)][q]) for q in ours[m]) < 1e-9
    # scored by probability (the judged column), so a query's first row is its most probable source
    first = imp.ranked["hier. adv. iovin. 1.1"][0]
    assert first[1] == max(r.score for r in rows if r.query == "hier. adv. iovin. 1.1")


def test_similia_export_header_with_rank_is_read_by_rank():
    from workbench.exports import RESULT_HEADER

    pad = "," * (len(RESULT_HEADER) - 13)  # the explanation columns, empty here
    lines = [",".join(RESULT_HEADER),
             "q1,t,s2,t,0.9,0.2,No,2,,0.1,0.1,," + pad,
             "q1,t,s1,t,0.5,0.8,Yes,1,cit.,0.7,0.1,," + pad]
    imp = IX.to_benchmark(IX.read_run("locisimiles", "\n".join(lines)), ["q1"], ["s1", "s2"])
    assert [s for s, _ in imp.ranked["q1"]] == ["s1", "s2"]


def test_passim_pairs_either_way_round():
    text = "\n".join(json.dumps(o) for o in ({"id1": "q1", "id2": "s1", "matches": 12},
                                             {"id1": "s2", "id2": "q1", "score": 20.5},
                                             {"id1": "x", "id2": "y", "score": 1}))
    imp = IX.to_benchmark(IX.read_run("passim", text), ["q1"], ["s1", "s2"])
    assert imp.ranked == {"q1": [("s2", 20.5), ("s1", 12.0)]}
    assert imp.report()["unmatched_queries"]["listed"] == ["x"]
    with pytest.raises(IX.InterchangeError, match="line 1: a passim cluster record"):
        IX.read_run("passim", json.dumps({"cluster": 3, "id": "a"}))


@pytest.mark.parametrize("fmt,text,message", [
    ("trec", "q Q0 s 1 0.5 tag\nq Q0 t 1 0.4 tag\n", "line 2: query 'q' has rank 1 twice (lines 1 and 2)"),
    ("trec", "q Q0 s 1 0.5\n", "line 1: a TREC run line has 6 fields"),
    ("trec", "q Q0 s 1 0.5 t\nq Q0 s 2 0.4 t\n", "line 2: query 'q' lists 's' twice"),
    ("trec", "q Q0 s one 0.5 t\n", "line 1: rank 'one' is not an integer"),
    ("tesserae-csv", "# c\n\nRESULT,TARGET,SOURCE,SCORE\n1,a,b,3\n", "line 3: not a Tesserae results header: no "
                                                                     "column for query, source"),
    ("tesserae-csv", "RESULT,TARGET_LOC,SOURCE_LOC,SCORE\n1,a,b,high\n", "line 2: score 'high' is not a number"),
    ("locisimiles", "query_id,source_id,similarity,rank\nq,s,0.5,1\nq,t,0.4,1\n", "line 3: query 'q' has rank 1 "
                                                                                 "twice"),
    ("locisimiles", "query,source,score\n", "line 1: not a locisimiles results header"),
    ("tesserae-xml", "<results>\n<tessdata score='1'>\n<phrase text='source' line='1.1'>x</phrase>\n</results>",
     "line 4: not well-formed XML"),
    ("tesserae-xml", "<!DOCTYPE r [<!ENTITY a 'aaaa'>]><results/>", "DOCTYPE"),
    ("passim", '{"id1": "a", "id2": "b", "score": 1}\nnot json\n', "line 2: not JSON"),
])
def test_bad_imports_name_the_line(fmt, text, message):
    with pytest.raises(IX.InterchangeError) as err:
        IX.read_run(fmt, text)
    assert message in str(err.value)


BIG = "9" * 5000


@pytest.mark.parametrize("fmt,text,message", [
    ("passim", '{"id1": "a", "id2": "b", "score": 1}\n' + "[" * 5000 + "]" * 5000, "line 2: JSON nested too deeply"),
    ("passim", '{"id1": "a", "id2": "b", "score": 1}\n' + '{"id1": "a", "id2": "b", "score": ' + BIG + "}",
     "line 2: score: 99999"),
    ("passim", '{"id1": "a", "id2": "b", "score": 1e400}', "line 1: score: must be a finite number"),
    ("trec", f"q Q0 s {BIG} 0.5 t\n", "line 1: rank '999999"),
    ("trec", f"q Q0 s 1 {BIG} t\n", "line 1: score '999999"),
    ("locisimiles", f"query_id,source_id,similarity,rank\nq,s,0.5,{BIG}\n", "line 2: rank '999999"),
    ("locisimiles", "query_id,source_id,similarity\nq,s," + "1" * 200_000 + "\n", "line 2: not locisimiles"),
    ("tesserae-xml", f"<results>\n<tessdata score='{BIG}'/></results>", "line 2: score '999999"),
])
def test_deep_json_long_numbers_and_long_fields_name_the_line(fmt, text, message):
    """What let a RecursionError, a ValueError of int() or csv's field limit out as a traceback (issue 40)."""
    with pytest.raises(IX.InterchangeError) as err:
        IX.read_run(fmt, text)
    assert message in str(err.value) and len(str(err.value)) < 300


def test_any_malformed_file_is_an_error_naming_its_line():
    """Whatever the bytes, every reader answers rows or an InterchangeError with a sentence, never another error."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    pieces = st.sampled_from(["q", "Q0", "s", "1", "-1", "0.5", "t", BIG[:400], "1e400", "nan", "[", "{", "}", "]",
                              '"', ",", "\t", " ", "\n", '{"id1": "a", "id2": "b", "score": ', "<tessdata score='1'>",
                              "<phrase text='source' line='1'/>", "</tessdata>", "query_id,source_id,similarity,rank",
                              "RESULT,TARGET_LOC,SOURCE_LOC,SCORE", "\x00", "é"])

    @settings(max_examples=300, deadline=None, derandomize=True, database=None)
    @given(st.sampled_from(sorted(IX.READERS)), st.lists(pieces, max_size=60).map("".join))
    def check(fmt, text):
        try:
            IX.read_run(fmt, text)
        except IX.InterchangeError as exc:
            assert str(exc)

    check()


def test_the_suite_names_the_file_and_the_line(tmp_path):
    import io

    from benchmarks.suite.suite_commands import run_suite_command
    from core.cli import CommandInputError

    bad = tmp_path / "theirs.jsonl"
    bad.write_text('{"id1": "a", "id2": "b", "score": 1}\n' + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(CommandInputError, match="^theirs.jsonl:2: JSON nested too deeply"):
        run_suite_command(methods=[f"file:passim:{bad}"], benchmarks=["lucan-vergil"], stdout=io.StringIO(),
                          stderr=io.StringIO())


def test_too_many_rows_is_refused_at_the_line_past_the_limit(monkeypatch):
    monkeypatch.setattr(IX, "MAX_ROWS", 1000)
    text = "".join(f"q Q0 s{i} {i + 1} {-i} t\n" for i in range(1001))
    with pytest.raises(IX.InterchangeError, match="line 1001: more than 1,000 rows"):
        IX.read_run("trec", text)


def test_no_row_matching_is_an_error_and_nothing_is_returned():
    rows = IX.read_run("trec", "a Q0 b 1 1 t\n")
    with pytest.raises(IX.InterchangeError, match="line 1: no row names a query and a source"):
        IX.to_benchmark(rows, ["q"], ["s"])


def test_significance_tests():
    import numpy as np
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(1)
    a, b = rng.random(12), rng.random(12)
    d = a - b
    # exact sign-flip p over all 2^12 assignments vs the sampled one
    signs = ((np.arange(4096)[:, None] >> np.arange(12)) & 1) * 2 - 1
    exact = float((np.abs((signs * d).mean(axis=1)) >= abs(d.mean()) - 1e-12).mean())
    assert abs(MS.randomization_test(a, b, n_resamples=20000) - exact) < 0.02
    assert math.isclose(MS.t_test(a, b), ttest_rel(a, b).pvalue, rel_tol=1e-12)
    assert MS.t_test(a, a) == 1.0


@needs_data
def test_suite_scores_other_tools_files_beside_its_methods_and_exports_everything(tmp_path):
    import io

    from benchmarks.suite.suite_commands import run_suite_command
    from core.cli import CommandInputError

    out, err = io.StringIO(), io.StringIO()
    tess = f"file:tesserae-csv:{DATA / 'tesserae_v3_lucan.csv'}"
    assert run_suite_command(methods=["bm25-lemma", tess], benchmarks=["lucan-vergil"], export=str(tmp_path / "x"),
                             output=str(tmp_path / "r.json"), stdout=out, stderr=err) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    row = report["rows"]["lucan-vergil"][tess]
    assert row["training"]["unmatched_queries"]["listed"] == ["luc. 1.1"] and row["n_queries"] == 617
    assert f"| lucan-vergil | {tess} |" in out.getvalue()
    d = tmp_path / "x" / "lucan-vergil"
    assert (d / "qrels.txt").is_file() and (d / "qrels-fold-4.txt").is_file()
    assert (d / "beir" / "corpus.jsonl").is_file() and (d / "beir-fold-0" / "qrels" / "test.tsv").is_file()
    # the exported TREC run, read back as another tool's file, scores exactly as the method did
    back = f"file:trec:{d / 'runs' / 'bm25-lemma.trec'}"
    run_suite_command(methods=["bm25-lemma", back], benchmarks=["lucan-vergil"], output=str(tmp_path / "r2.json"),
                      stdout=io.StringIO(), stderr=io.StringIO())
    rows = json.loads((tmp_path / "r2.json").read_text())["rows"]["lucan-vergil"]
    for m in ("R@1", "R@10", "R@100", "R@1000", "RR@10", "nDCG@10"):
        assert abs(rows[back]["mean"][m] - rows["bm25-lemma"]["mean"][m]) < 1e-12
    bad = tmp_path / "bad.trec"
    bad.write_text("luc.%202.5 Q0 verg.%20aen.%2012.85 1 2.0 t\nluc.%202.5 Q0 verg.%20aen.%201.1 1 1.0 t\n")
    with pytest.raises(CommandInputError, match="^bad.trec:2: query 'luc. 2.5' has rank 1 twice"):
        run_suite_command(methods=["bm25-lemma", f"file:trec:{bad}"], benchmarks=["lucan-vergil"],
                          stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(CommandInputError, match="write file:FORMAT:PATH"):
        run_suite_command(methods=[f"file:csv:{bad}"])


@needs_data
def test_tesserae_v6_results_csv_excerpt_maps_to_lucan_vergil_with_unmatched_ids_counted():
    """A Tesserae v6 results CSV (data/tesserae_v6_lucan.csv: the layout of v6's "Export CSV": a UTF-8 byte-order
    mark, the header Rank, Source Locus, Source Text, Target Locus, Target Text, Score, Matched Words, Channels,
    every cell quoted, matched words marked **word**, a quote in a line doubled), over real Lucan/Aeneid lines:
    its target is our query, its loci our ids; a line outside the benchmark (luc. 1.1) and a source outside the
    Aeneid (verg. georg. 4.1) are counted and listed, and the rest is scored on the benchmark's gold."""
    lucan = S.lucan_benchmark()
    text = (DATA / "tesserae_v6_lucan.csv").read_text(encoding="utf-8")
    assert text.startswith("\ufeffRank,Source Locus,")
    rows = IX.read_run("tesserae-csv", text)
    assert len(rows) == 9 and rows[0].line == 2 and (rows[0].query, rows[0].source, rows[0].score) == (
        "luc. 2.13", "verg. aen. 12.866", 9.412)
    assert rows[4].source == "verg. aen. 1.257" and rows[4].score == 6.53  # the doubled quote and commas of its text
    imp = IX.to_benchmark(rows, lucan.query_ids, lucan.source_ids)
    rep = imp.report()
    assert rep["unmatched_queries"] == {"count": 1, "distinct": 1, "listed": ["luc. 1.1"]}
    assert rep["unmatched_sources"] == {"count": 1, "distinct": 1, "listed": ["verg. georg. 4.1"]}
    assert [s for s, _ in imp.ranked["luc. 2.16"]] == ["verg. aen. 4.474", "verg. aen. 3.238"]
    assert [s for s, _ in imp.ranked["luc. 2.11"]] == ["verg. aen. 7.314", "verg. aen. 1.257"]
    order = {q: [s for s, _ in v] for q, v in imp.ranked.items()}
    per = MS.per_query(order, {q: lucan.gold[q] for q in ("luc. 2.5", "luc. 2.11", "luc. 2.13", "luc. 2.16")},
                       ["RR@10", "R@10"])
    assert per["RR@10"] == {"luc. 2.5": 0.0, "luc. 2.11": 1.0, "luc. 2.13": 1.0, "luc. 2.16": 1.0}
    assert per["R@10"]["luc. 2.11"] == pytest.approx(2 / 3) and per["R@10"]["luc. 2.16"] == 1.0
    with pytest.raises(IX.InterchangeError, match="line 8: unknown query 'luc. 1.1'"):
        IX.to_benchmark(rows, lucan.query_ids, lucan.source_ids, strict=True)
    # the same export with its locus column renamed is refused at its header, naming what it found
    bad = text.replace("Target Locus", "Target Place", 1)
    with pytest.raises(IX.InterchangeError, match=r"line 1: not a Tesserae results header: no column for query .*"
                                                  r"found Rank, Source Locus, Source Text, Target Place"):
        IX.read_run("tesserae-csv", bad)
