"""Loaders, matching, splits and fold pools."""
import csv
from collections import Counter

import pytest

from benchmarks.loci import data, matching, splits
from benchmarks.loci.data import Benchmark, GoldLink, Segment

DATA = data.default_data_dir()
needs_data = pytest.mark.skipif(not (DATA / "pairs_545_with_text.csv").exists(), reason="shared data missing")


@needs_data
def test_load_545_counts_and_types():
    b = data.load_default_545()
    s = b.summary()
    assert s["n_raw_links"] == 545 and s["n_gold_links"] == 540  # 5 duplicated pairs merged
    assert s["n_query_segments"] == 463 and s["n_source_segments"] == 408
    assert Counter(g.label for g in b.raw_links) == {"cit.": 483, "cf.": 62}
    assert s["label_counts"] == {"cit.": 481, "cf.": 59}
    assert b.queries[0].seg_id == "hier. epist. 21.2.5.1" and b.queries[0].work == "hier. epist."
    assert b.queries[0].ref == "21.2.5.1" and b.queries[0].author == "Jerome"
    assert "/" not in b.sources[0].text
    # the older file's folds split some queries; the loader puts them in their majority fold
    assert b.meta["fold_conflicts"]["with_text"]["queries_in_several_folds"] > 0
    assert set(b.file_folds) == {"with_text", "ref_type"}


def _write(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def test_gold_csv_labels(tmp_path):
    _write(tmp_path / "g.csv", ["query_id", "source_id", "label"],
           [["q1", "s1", "1"], ["q1", "s2", "0"], ["q2", "s1", "cf."], ["q2", "s1", "cit."], ["q3", "s3", ""]])
    raw = data.load_gold_csv(tmp_path / "g.csv")
    assert [(g.query_id, g.source_id, g.label) for g in raw] == [
        ("q1", "s1", "link"), ("q2", "s1", "cf."), ("q2", "s1", "cit."), ("q3", "s3", "link")]
    merged = {(g.query_id, g.source_id): g.label for g in data.merge_links(raw)}
    assert merged[("q2", "s1")] == "cit."
    with pytest.raises(ValueError):
        _write(tmp_path / "bad.csv", ["query_id", "source_id", "label"], [["a", "b", "maybe"]])
        data.load_gold_csv(tmp_path / "bad.csv")


@needs_data
def test_package_examples_load():
    d = DATA / "package_examples"
    b = data.benchmark_from_files(d / "hieronymus_samples.csv", d / "vergil_samples.csv", d / "ground_truth.csv")
    assert matching.check_gold_ids(b)["ok"]
    assert len(b.gold) > 0


def test_release_dir_layout(tmp_path):
    rel = tmp_path / "release" / "data"
    rel.mkdir(parents=True)
    _write(rel / "query_corpus.csv", ["seg_id", "text", "author", "work"],
           [["hier. epist. 1.1", "Arma uirumque cano", "Jerome", "epist."], ["hier. epist. 1.2", "nihil", "Jerome", "epist."]])
    _write(rel / "source_corpus.csv", ["seg_id", "text", "author", "work"],
           [["verg. aen. 1.1", "Arma virumque cano, Troiae qui primus ab oris", "Virgil", "aen."]])
    _write(rel / "labels.csv", ["query_id", "source_id", "ref_type", "fold"],
           [["hier. epist. 1.1", "verg. aen. 1.1", "cit.", "0"]])
    b = data.load_release_dir(tmp_path / "release")
    assert len(b.queries) == 2 and len(b.sources) == 1
    assert b.gold[0].label == "cit." and b.file_folds["file"] == {"hier. epist. 1.1": 0}


def test_matching_by_id_text_and_fuzzy():
    gold = [Segment("<verg. aen. 1.1>", "Arma virumque cano"), Segment("x1", "Tityre, tu patulae recubans"),
            Segment("x2", "quid faciat laetas segetes quo sidere terram uertere"), Segment("x3", "nothing like it")]
    corpus = [Segment("verg. aen. 1.1", "arma uirumque cano troiae"), Segment("c2", "TITYRE tu patulae recubans!"),
              Segment("c3", "Quid faciat laetas segetes, quo sidere terram uertere, Maecenas, ulmisque adiungere")]
    rep = matching.match_segments(gold, corpus)
    assert rep.mapping == {"<verg. aen. 1.1>": "verg. aen. 1.1", "x1": "c2", "x2": "c3"}
    assert (rep.by_id, rep.by_text, rep.by_fuzzy) == (1, 1, 1) and rep.unmatched == ["x3"]


def test_attach_corpus_rewrites_gold_and_keeps_unmatched():
    b = Benchmark("t", [Segment("q", "Arma uirumque cano")], [Segment("s", "arma uirumque"), Segment("s2", "zzz yyy")],
                  [GoldLink("q", "s", "cit."), GoldLink("q", "s2", "cf.")])
    qc = [Segment("Q1", "arma virumque cano", "Jerome", "ep"), Segment("Q2", "alia", "Jerome", "ep")]
    sc = [Segment("S1", "Arma uirumque", "Virgil", "aen"), Segment("S9", "other", "Virgil", "aen")]
    nb, rep = matching.attach_corpus(b, qc, sc, keep_gold_queries=False)
    assert {(g.query_id, g.source_id) for g in nb.gold} == {("Q1", "S1"), ("Q1", "s2")}
    assert [s.seg_id for s in nb.sources] == ["S1", "S9", "s2"]
    assert rep["sources"]["unmatched"] == ["s2"] and rep["queries"]["matched"] == 1
    kb, rep = matching.attach_corpus(b, qc, sc)  # default: gold queries keep id and text, take corpus labels
    assert {(g.query_id, g.source_id) for g in kb.gold} == {("q", "S1"), ("q", "s2")}
    assert [(s.seg_id, s.text, s.author, s.work) for s in kb.queries] == [
        ("Q2", "alia", "Jerome", "ep"), ("q", "Arma uirumque cano", "Jerome", "ep")]
    assert rep["queries"]["matched"] == 1


def _toy_bench():
    qs, ss, gold = [], [], []
    for w in ("A", "B"):
        for i in range(20):
            qs.append(Segment(f"{w}q{i}", f"text {w} q {i}", author=w.lower(), work=w))
        for i in range(30):
            ss.append(Segment(f"{w}s{i}", f"text {w} s {i}", author="v" + w.lower(), work="v" + w))
    for i in range(8):  # queries 0..7 of each work cite one or two sources
        for w in ("A", "B"):
            gold.append(GoldLink(f"{w}q{i}", f"{w}s{i}", "cit."))
            if i % 3 == 0:
                gold.append(GoldLink(f"{w}q{i}", f"{w}s{i + 10}", "cf."))
    return Benchmark("toy", qs, ss, gold)


def test_grouped_kfold_keeps_queries_together_and_balanced():
    b = _toy_bench()
    sp = splits.grouped_kfold(b, 5, seed=1)
    assert set(sp.query_fold) == set(b.citing_query_ids())
    sizes = Counter(sp.query_fold.values())
    assert max(sizes.values()) - min(sizes.values()) <= 1
    assert splits.grouped_kfold(b, 5, seed=1).query_fold == sp.query_fold


def test_fold_pools_pad_one_to_one_from_same_work():
    b = _toy_bench()
    sp = splits.grouped_kfold(b, 4, seed=0)
    pools = splits.build_fold_pools(b, sp, seed=0)
    citing = set(b.citing_query_ids())
    cited = set(b.cited_source_ids())
    work = {s.seg_id: s.work for s in b.queries + b.sources}
    seen_q, seen_s = set(), set()
    for p in pools:
        assert len(p.query_distractors) == len(p.citing_queries)
        assert len(p.source_distractors) == len(p.cited_sources)
        assert not (set(p.query_distractors) & citing) and not (set(p.source_distractors) & cited)
        assert Counter(work[q] for q in p.query_distractors) == Counter(work[q] for q in p.citing_queries)
        assert Counter(work[s] for s in p.source_distractors) == Counter(work[s] for s in p.cited_sources)
        assert not (seen_q & set(p.query_distractors)) and not (seen_s & set(p.source_distractors))
        seen_q |= set(p.query_distractors)
        seen_s |= set(p.source_distractors)
        assert p.n_pos == sum(1 for g in b.gold if g.query_id in p.citing_queries)
        assert all(sp.query_fold[q] == p.fold for q in p.citing_queries)
    t4 = splits.table4(pools)
    assert t4["total"]["pos"] == len(b.gold)
    assert t4["total"]["pairs"] == sum(p.n_pairs for p in pools)


@needs_data
def test_file_split_one_fold_per_query():
    b = data.load_default_545()
    for name in ("ref_type", "with_text"):
        sp = splits.split_from_file(b, name)
        assert sp.n_folds == 5 and set(sp.query_fold) == set(b.citing_query_ids())
    pools = splits.build_fold_pools(b, splits.split_from_file(b, "ref_type"))
    assert sum(p.n_pos for p in pools) == 540
    assert all(not p.query_distractors for p in pools)  # gold-only benchmark: nothing to pad with
