"""Reference-type rule (§3.3) and the lexical-overlap audit on constructed cases."""
import pytest

from detection.latin import overlap as lexical
from detection.latin.overlap import Analysed


def A(*segs):
    """An analysed text from content-lemma segments (bypasses the tokeniser/lemmatiser)."""
    return Analysed(tuple(tuple(s.split()) for s in segs), tuple(tuple(s.split()) for s in segs))


def test_rule_adjacent_pair_is_cit():
    assert lexical.reference_type(A("arma uir cano troia"), A("cano arma uir")) == "cit."


def test_rule_gap_of_two_allowed_three_not():
    q = A("mens x y agito molem")      # mens .. agito: two words between
    s = A("mens agito")
    assert lexical.reference_type(q, s) == "cit."
    q3 = A("mens x y z agito")
    assert lexical.reference_type(q3, s) == "cf."
    assert lexical.reference_type(q3, s, max_gap=3) == "cit."


def test_rule_needs_both_lemmas_in_one_hard_segment():
    q = A("mens", "agito")  # split by hard punctuation
    assert lexical.reference_type(q, A("mens agito")) == "cf."
    assert lexical.reference_type(A("mens agito"), A("mens agito")) == "cit."


def test_rule_single_shared_lemma_is_cf_and_sides():
    assert lexical.reference_type(A("timeo omnis res"), A("omnis tutus timeo")) == "cit."
    assert lexical.reference_type(A("timeo a b c omnis"), A("omnis timeo")) == "cf."
    assert lexical.reference_type(A("timeo a b c omnis"), A("omnis timeo"), sides="source") == "cit."
    assert lexical.reference_type(A("dux femina"), A("femina facti")) == "cf."


def test_rule_on_real_text_with_stopwords_removed():
    q = lexical.analyse("dat sine mente sonum.")
    s = lexical.analyse("dat inania uerba, dat sine mente sonum gressusque effingit euntis.")
    assert lexical.reference_type(q, s) == "cit."


def test_rule_grid_equals_pairwise_rule():
    qs = [A("a b c d"), A("a x y z b"), A("c", "d"), A("e f")]
    ss = [A("b a"), A("c d e"), A("f q e"), A("z")]
    grid = lexical.rule_grid(qs, ss)
    for i, q in enumerate(qs):
        for j, s in enumerate(ss):
            assert grid[i, j] == (lexical.reference_type(q, s) == "cit.")
    lem = lexical.shared_counts_grid(qs, ss)
    assert lem[0, 1] == 2 and lem[3, 2] == 2 and lem[3, 3] == 0


def test_audit_on_constructed_gold():
    pairs = [(A("arma uir cano"), A("arma uir")),          # shares bigram arma-uir
             (A("arma x cano"), A("cano y arma")),          # two lemmas, no bigram
             (A("arma"), A("arma b")),                      # one lemma
             (A("dux"), A("femina")),                       # nothing
             (A("mens agito molem"), A("agito mens"))]      # reversed order: no ordered bigram, 3 lemmas? (2)
    a = lexical.audit(pairs, ["cit.", "cit.", "cf.", "cf.", "cit."])
    assert a["n"] == 5
    assert a["buckets"]["bigram"]["n"] == 1 and a["buckets"]["two_lemmas"]["n"] == 2
    assert a["buckets"]["one_lemma"]["n"] == 1 and a["buckets"]["none"]["n"] == 1
    assert a["share_ge1_bigram"] == pytest.approx(0.2)
    assert a["share_ge2_lemmas"] == pytest.approx(0.6)
    assert a["share_nothing"] == pytest.approx(0.2)
    assert a["by_label"]["cf."]["n"] == 2 and a["by_label"]["cf."]["share_nothing"] == 0.5
    assert a["mean_shared_lemmas"] == pytest.approx((2 + 2 + 1 + 0 + 2) / 5)


def test_overlap_bucket_order():
    assert lexical.overlap_bucket(5, 1) == "bigram"
    assert lexical.overlap_bucket(2, 0) == "two_lemmas"
    assert lexical.overlap_bucket(1, 0) == "one_lemma"
    assert lexical.overlap_bucket(0, 0) == "none"
