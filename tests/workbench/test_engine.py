"""The workbench's pure logic and the detection candidates (`detection.candidates`) on the real locisimiles
package examples (no database)."""
from pathlib import Path

import numpy as np
import pytest

from detection.candidates import Candidates, detect_range, label_pairs, score_candidates
from workbench.engine import compare as C
from workbench.engine.highlight import highlight_pair, spans
from workbench.engine.uploads import UploadError, guess_format, parse_upload

EXAMPLES = Path(__file__).resolve().parents[2] / "data" / "locisimiles" / "package_examples"
LIMITS = {"max_bytes": 1_000_000, "max_segments": 1000}


def test_csv_upload_reads_the_package_examples():
    doc = parse_upload("hieronymus_samples.csv", (EXAMPLES / "hieronymus_samples.csv").read_bytes(), **LIMITS)
    assert doc.format == "csv" and len(doc.segments) == 11
    assert doc.segments[0].seg_id == "hier. adv. iovin. 1.1" and "Dat sine mente sonum" in doc.segments[0].text


def test_plain_text_is_split_into_sentences_with_ids():
    text = "Arma uirumque cano. Troiae qui primus ab oris uenit.\n\nItaliam fato profugus Lauiniaque uenit litora.\n"
    doc = parse_upload("aeneis.txt", text.encode(), **LIMITS)
    assert [s.seg_id for s in doc.segments] == ["aeneis 1.1", "aeneis 1.2", "aeneis 2.1"]


def test_tess_and_tei_uploads():
    tess = "<verg. aen. 1.1>\tArma uirumque cano, Troiae qui primus ab oris\n<verg. aen. 1.2>\tItaliam fato profugus.\n"
    doc = parse_upload("aen.tess", tess.encode(), **LIMITS)
    # verse: one segment a line, with the poem's own line ids (runs may search windows of them)
    assert [(x.seg_id, x.text) for x in doc.segments] == [
        ("verg. aen. 1.1", "Arma uirumque cano, Troiae qui primus ab oris"), ("verg. aen. 1.2", "Italiam fato profugus.")]
    tei = ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="textpart" n="1">'
           '<p>Furiosas Apollinis uates legimus. Dat sine mente sonum.<note>app. crit.</note></p></div></body></text></TEI>')
    doc = parse_upload("epist.xml", tei.encode(), **LIMITS)
    assert [s.seg_id for s in doc.segments] == ["epist 1.1", "epist 1.2"] and "app. crit." not in doc.segments[0].text


@pytest.mark.parametrize("name, data, message", [
    ("q.csv", b"id,text\na,b\n", "q.csv, line 1: missing column(s) seg_id"),
    ("q.csv", b"seg_id,text\na,\xff\xfe\n", "q.csv, line 2: not UTF-8"),
    ("q.csv", b"seg_id,text\na,\xce\xba\xcf\x8d\xcf\x81\xce\xb9\xce\xb5\n", "q.csv: no text segments found (1 row not in Latin script skipped; the first: q.csv, line 2: text of 'a' is not in Latin "
              "script"),
    ("q.xml", b"<TEI><body>", "q.xml, line 1: invalid XML"),
    ("q.doc", b"x", "cannot tell the format from the name"),
    ("q.csv", b"   \n", "q.csv: the file is empty"),
    ("q.csv", b"seg_id,text\n" + b"x" * 301 + b",Arma uirumque cano\n", "is longer than 300 characters"),
])
def test_bad_uploads_name_the_file_and_line(name, data, message):
    with pytest.raises(UploadError, match=message.replace(".", r"\.").replace("(", r"\(").replace(")", r"\)")):
        parse_upload(name, data, **LIMITS)


def test_limits_name_the_limit():
    with pytest.raises(UploadError, match="the file is 29 bytes; the limit is 10"):
        parse_upload("q.csv", b"seg_id,text\na,Arma uirumque c", max_bytes=10, max_segments=5)
    rows = "seg_id,text\n" + "".join(f"s{i},Arma uirumque cano {i}\n" for i in range(6))
    with pytest.raises(UploadError, match="line 7: more than 5 segments; the limit is 5"):  # refused while reading
        parse_upload("q.csv", rows.encode(), max_bytes=10_000, max_segments=5)
    with pytest.raises(UploadError, match="6 segments; the limit is 5"):  # the other formats: once read
        parse_upload("q.txt", "".join(f"Arma uirumque cano {i}.\n\n" for i in range(6)).encode(), max_bytes=10_000,
                     max_segments=5)
    assert guess_format("X.TESS") == "tess"


def test_highlight_marks_shared_lemmas_and_keeps_the_text():
    q = "Furiosas Apollinis uates legimus; et illud Uirgilianum: Dat sine mente sonum."
    s = "dat inania uerba, dat sine mente sonum gressusque effingit euntis"
    h = highlight_pair(q, s)
    assert {"mens", "sonus"} <= set(h["shared_lemmas"])
    assert "".join(p for p, _, _ in h["query"]) == q and "".join(p for p, _, _ in h["source"]) == s
    marked = {p for p, shared, _ in h["source"] if shared}
    assert {"mente", "sonum"} <= marked and "inania" not in marked
    assert spans("abc", set()) == [["abc", False, []]]


def test_highlight_colours_each_word_by_the_channels_that_matched_it():
    """Matched words given as lemmas or as forms (any case, u/v spelling) colour the passages' words."""
    from workbench.engine.explain import channels

    q = "Furiosas Apollinis uates legimus; et illud Uirgilianum: Dat sine mente sonum."
    s = "dat inania uerba, dat sine mente sonum gressusque effingit euntis"
    explain = {"channels": [
        {"name": "lemma", "score": 2.0, "weight": 0.5, "contribution": 1.0, "matches": [["mens", "mens"],
                                                                                         ["sonus", "sonus"]]},
        {"name": "exact", "score": 1.0, "weight": 0.2, "contribution": 0.2, "matches": [["Sonum", "sonum"]]},
        {"name": "sound", "score": 0.0, "weight": 0.1, "contribution": 0.0, "matches": []}]}
    h = highlight_pair(q, s, channels(explain))
    by_word = {p: chans for p, _, chans in h["source"] if chans}
    assert by_word == {"mente": ["lemma"], "sonum": ["lemma", "exact"]}
    assert {p: chans for p, _, chans in h["query"] if chans} == {"mente": ["lemma"], "sonum": ["lemma", "exact"]}
    assert "".join(p for p, _, _ in h["source"]) == s


def test_explanations_flatten_for_csv_and_view_and_tolerate_bad_parts():
    from workbench.engine import explain as E

    good = {"channels": [
        {"name": "lemma", "score": 3.0, "weight": 0.5, "contribution": 1.5, "matches": [["arma", "arma"]]},
        {"name": "sound", "score": 0.5, "weight": 1.0, "contribution": 0.5, "matches": [["uirum", "uiro"]]},
        {"name": "semantic", "score": 0.0, "weight": 0.3, "contribution": 0.0, "matches": []}],
        "uniqueness": 4, "rarity": {"arma": 2.5, "uirum": 6.0, "cano": 1.0}, "query_lines": ["1"], "source_lines": []}
    assert E.flat(good) == {"channels": "lemma;sound", "contributions": "lemma=1.5000;sound=0.5000", "uniqueness": 4,
                            "matched_words": "lemma:arma/arma sound:uirum/uiro"}
    v = E.view(good)
    assert [(c["name"], c["share"]) for c in v["channels"]] == [("lemma", 0.75), ("sound", 0.25), ("semantic", 0.0)]
    assert v["uniqueness"] == 4 and v["rarity"] == [["uirum", 6.0, "common"], ["arma", 2.5, "common"]]  # rarest first
    assert v["uniqueness_text"] == "shared by 4 other passages: a rare combination"
    assert [E.how_unique(n) for n in (None, 0, 1, 57, 2342)] == [
        "not measured", "no other passage has these words together: unique",
        "shared by 1 other passage: a rare combination", "shared by 57 other passages: an uncommon combination",
        "shared by 2,342 other passages: a common combination"]
    assert [E.how_rare(v) for v in (4.0, 8.5, 12.0)] == ["common", "uncommon", "rare"]
    # no explanation (older runs, methods without one): empty columns, nothing to draw
    assert E.flat({}) == {"channels": "", "contributions": "", "uniqueness": None, "matched_words": ""}
    assert E.view({}) is None and E.view(None) is None
    # malformed parts are left out, never an error
    bad = {"channels": [{"name": ""}, "x", {"name": "lemma", "contribution": float("nan"), "matches": [["a"], [1, 2]]},
                        {"name": "exact", "contribution": True, "matches": [["a", "a"]]}],
           "uniqueness": -1, "rarity": {"a": "high"}}
    assert E.flat(bad) == {"channels": "exact", "contributions": "", "uniqueness": None, "matched_words": "exact:a/a"}
    assert [c["name"] for c in E.view(bad)["channels"]] == ["lemma", "exact"]


def _package_examples():
    from detection.latin.readers import read_segments_csv

    return read_segments_csv(EXAMPLES / "hieronymus_samples.csv"), read_segments_csv(EXAMPLES / "vergil_samples.csv")


def test_detect_with_a_reranker_on_the_package_examples():
    from benchmarks.loci.method_adapters import LexicalRuleScorer
    from detection.methods import registry

    queries, sources = _package_examples()
    gold = {(r.split(",")[0].strip('"'), r.split(",")[1].strip('"')) for r in
            (EXAMPLES / "ground_truth.csv").read_text().splitlines()[1:]}
    q_texts = [q.text for q in queries]
    top = registry.build("bm25-lemma").fit([s.seg_id for s in sources], [s.text for s in sources]).search(q_texts, 3)
    result = detect_range(top.indices, top.scores, 0, q_texts, [s.seg_id for s in sources], [s.text for s in sources],
                          reranker=LexicalRuleScorer(), thresholds={"cit.": 0.2, "cf.": 0.2})
    assert len(result) <= 33 and result.probs.shape == (len(result), 3)
    top1 = {(queries[q].seg_id, sources[s].seg_id) for q, s, r in zip(result.query, result.source, result.rank) if r == 1}
    assert len(top1 & gold) >= 8  # the package's example pairs share words: BM25 ranks most of them first
    assert set(result.label) <= {"cit.", "cf.", ""} and "cit." in result.label
    assert set(result.bucket) <= {"bigram", "two_lemmas", "one_lemma", "none"}
    assert label_pairs(np.array([[0.1, 0.6, 0.7], [0.5, 0.1, 0.6], [0.9, 0.1, 0.1]]), {"cit.": 0.5, "cf.": 0.5}) == \
        ["cit.", "cf.", ""]


def test_ranges_of_queries_concatenate_into_the_whole_detection():
    """Shards of queries, each reranked with the registry's lexical rule, give the columns of one range over
    all queries (what makes a sharded detection identical to one worker's)."""
    from detection.methods import registry

    queries, sources = _package_examples()
    q_texts, s_ids, s_texts = [q.text for q in queries], [s.seg_id for s in sources], [s.text for s in sources]
    q_ids = [q.seg_id for q in queries]
    retriever = registry.build("tfidf-lemma").fit(s_ids, s_texts)

    def run(start, stop):
        top = retriever.search_range(q_texts, 4, start, stop)
        return detect_range(top.indices, top.scores, start, q_texts, s_ids, s_texts, query_ids=q_ids,
                            reranker=registry.build("lexical-rule"), thresholds={"cit.": 0.2, "cf.": 0.2}, min_score=0.01)

    whole = run(0, len(queries)).to_arrays()
    parts = [Candidates.from_arrays(run(a, min(a + 4, len(queries))).to_arrays()) for a in range(0, len(queries), 4)]
    joined = Candidates.concat(parts).to_arrays()
    assert set(joined) == set(whole) and len(whole["c_query"]) > len(queries)
    for key, column in whole.items():
        np.testing.assert_array_equal(joined[key], column, err_msg=key)


def test_compare_reports():
    a = [{"query_id": "q1", "source_id": "s1", "rank": 1, "label": "cit."},
         {"query_id": "q2", "source_id": "s2", "rank": 40, "label": "cf."}]
    b = [{"query_id": "q1", "source_id": "s1", "rank": None, "label": "cit."},
         {"query_id": "q2", "source_id": "s2", "rank": 3, "label": "cf."}]
    diff = C.gold_differences(a, b, 10)
    assert [r["query_id"] for r in diff["only_a"]] == ["q1"] and [r["query_id"] for r in diff["only_b"]] == ["q2"]
    assert diff["both"] == 0
    found = [{"query_id": f"luc. 1.{n}", "source_id": "verg. aen. 1.10", "rank": 1, "label": "cf."} for n in (100, 10, 2, 1)]
    assert [r["query_id"] for r in C.gold_differences(found, [], 10)["only_a"]] == [
        "luc. 1.1", "luc. 1.2", "luc. 1.10", "luc. 1.100"]  # citation order, not string order
    assert sorted(["verg. aen. 10.1", "verg. aen. 2.3", "verg. aen. 2.10"], key=C.citation_key) == [
        "verg. aen. 2.3", "verg. aen. 2.10", "verg. aen. 10.1"]
    rows = C.query_differences([{"query_id": "q1", "rr": 1.0}, {"query_id": "q2", "rr": 0.5}],
                               [{"query_id": "q1", "rr": 0.0}, {"query_id": "q2", "rr": 0.5}])
    assert rows == [{"query_id": "q1", "fold": None, "rr_a": 1.0, "rr_b": 0.0, "delta": -1.0}]
    assert C.metric_rows({"recall@10": 0.5, "pool": "gold"}, {"recall@10": 0.75}) == [
        {"metric": "recall@10", "a": 0.5, "b": 0.75, "delta": 0.25}]
    # a retrieval-only run against the same first stage with a reranker: compared on what each delivers
    first = {"mrr@10": 0.876, "recall@10": 0.931}
    reranked = {"mrr@10": 0.876, "recall@10": 0.931, "rerank_mrr@10": 0.906, "rerank_recall@10": 0.95,
                "rerank_cit_f1": 0.7}
    rows = {r["metric"]: r for r in C.metric_rows(C.final_summary(first), C.final_summary(reranked))}
    assert rows["mrr@10"]["b"] == 0.906 and abs(rows["mrr@10"]["delta"] - 0.030) < 1e-12
    assert rows["recall@10"]["b"] == 0.95 and "rerank_mrr@10" not in rows
    assert C.final_summary(reranked)["rerank_cit_f1"] == 0.7


def test_registry_rerankers_get_flat_candidates_with_texts_scores_and_ranks():
    """A reranker of the registry's shape (`predict_proba(candidates)`) sees every pair with its ids, texts,
    retrieval score and rank; its probabilities and the thresholds give the labels."""
    seen = {}

    class Toy:
        name = "toy"

        def predict_proba(self, cands, progress=None):
            seen["cands"] = cands
            p = np.asarray([0.9 if cands.query_ids[q] == "q1" else 0.1 for q in cands.qi])
            return np.column_stack([1 - p, p, np.zeros_like(p)])

    qi, si = np.array([0, 0, 1]), np.array([1, 0, 0])
    probs = score_candidates(Toy(), ["arma uirumque", "cano"], ["s0 text", "s1 text"], qi, si,
                             query_ids=["q1", "q2"], source_ids=["s0", "s1"], score=np.array([3.0, 2.0, 1.0]),
                             rank=np.array([1, 2, 1]))
    cands = seen["cands"]
    assert len(cands) == 3 and cands.source_ids == ["s0", "s1"] and list(cands.rank) == [1, 2, 1]
    assert cands.query_texts[cands.qi[2]] == "cano" and float(cands.score[0]) == 3.0
    assert label_pairs(probs, {"cit.": 0.5, "cf.": 0.5}) == ["cit.", "cit.", ""]


def test_list_differences_counts_the_pairs_each_run_alone_proposes():
    a = {"q1": [("s1", 3.0), ("s2", 2.0)], "q2": [("s3", 1.0)]}
    b = {"q1": [("s2", 5.0), ("s4", 1.0)], "q3": [("s5", 1.0)]}
    diff = C.list_differences(a, b, gold={("q1", "s1"): "cit.", ("q1", "s2"): "cf."})
    assert (diff["n_a"], diff["n_b"], diff["both"], diff["n_only_a"], diff["n_only_b"]) == (3, 3, 1, 2, 2)
    assert diff["jaccard"] == 1 / 5 and (diff["gold_a"], diff["gold_b"], diff["n_gold"]) == (2, 1, 2)
    assert diff["only_a"] == [{"query_id": "q1", "source_id": "s1", "rank": 1, "gold": "cit."},
                              {"query_id": "q2", "source_id": "s3", "rank": 1, "gold": None}]
    assert [r["query_id"] for r in diff["queries"]] == ["q1", "q2", "q3"]  # q1: 1 + 1 differ, the others 1 each
    assert C.list_differences(a, a)["queries"] == [] and C.list_differences({}, {})["jaccard"] == 1.0
