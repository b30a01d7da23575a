"""Corpus uniqueness over a reference corpus: the loci index built from real Latin Library pages, its exact posting
code, and the counts the ``channels`` explanations carry (shipped Latin Library index, named expected counts)."""
import numpy as np
import pytest

from detection.methods import registry
from detection.methods.lexical import reference_loci as R

AENEID_7 = """P. VERGILI MARONIS AENEIDOS LIBER SEPTIMVS

Tu quoque litoribus nostris, Aeneia nutrix,
aeternam moriens famam, Caieta, dedisti;
atque immota manet fatis Lavinia coniunx:
una salus victis, nullam sperare salutem.
ossa Hesperia in magna, si qua est ea gloria, signat.

Vergil The Latin Library The Classics Page
"""
LUCAN_2 = """LVCANI BELLVM CIVILE LIBER II

Fatorum immoto divisit limite mundum:
spes una salutis
Cur hanc tibi, rector Olympi, sollicitis visum mortalibus addere curam,

Lucan The Latin Library The Classics Page
"""
PROSE = """CICERO

Haec una salus est rei publicae; nam sine ea nulla spes salutis relinquitur, et fatis cedere nemo potest, """ \
    """neque quisquam immota mente fortunam ferre didicit, nisi qui sapientiam coluit. Quae cum ita sint, nihil """ \
    """est quod timeamus. Sed una salus, una spes nobis restat.

Cicero The Latin Library The Classics Page
"""
# the loci, files in name order: aen7.txt 0-4 (its five lines), cicero.txt 5-8 (the paragraph's four sentences:
# 44 words, so cut), lucan2.txt 9-11


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    root = tmp_path_factory.mktemp("ll")
    pages = root / "pages"
    pages.mkdir()
    for name, text in (("aen7.txt", AENEID_7), ("lucan2.txt", LUCAN_2), ("cicero.txt", PROSE)):
        (pages / name).write_text(text, encoding="utf-8")
    manifest = R.build_index(pages, root / "index")
    return R.LociIndex(root / "index"), manifest


def test_gap_code_round_trips_exactly():
    rng = np.random.default_rng(0)
    for ids in (np.array([0]), np.array([5, 6, 7, 200, 20_000, 3_000_000]),
                np.unique(rng.integers(0, 2_000_000, 5000))):
        code = R.encode_gaps(ids)
        assert np.array_equal(R.decode_gaps(code), ids)
    assert R.encode_gaps(np.array([127, 128])).tolist() == [0x7F, 0x01]  # 127 one byte; gap 1 one byte
    assert R.encode_gaps(np.array([128])).tolist() == [0x80, 0x01]  # 128 = 0 + 1 x 128: two bytes


def test_loci_are_lines_and_the_sentences_of_long_lines(small):
    index, manifest = small
    assert manifest["files"] == 3 and manifest["loci"] == 12  # titles, blank and navigation lines dropped
    assert index.holding(["salus", "unus"]).tolist() == [3, 5, 8, 10]  # aen. 7 'una salus', Cicero's first and
    assert index.holding(["spes", "salus"]).tolist() == [6, 8, 10]  # last sentences, Lucan; 'spes salutis' in the 2nd
    assert index.holding(["immotus"]).tolist() == [2, 6, 9]


def test_uniqueness_counts_the_other_loci_holding_the_shared_words(small):
    index, _ = small
    # spes una salutis (luc. 2.113) ~ una salus victis, nullam sperare salutem (aen. 2.354): they share unus and
    # salus. The reference holds both lines (loci 10 and 3: exactly their content lemmas), which are not others;
    # Cicero's 'una salus' (5) and 'Sed una salus, una spes nobis restat' (8, holding all of Lucan's line and more)
    # are
    own = [{"spes", "unus", "salus"}, {"unus", "salus", "uinco", "nullus", "spero"}]
    assert index.uniqueness({"unus", "salus"}) == 4
    assert index.uniqueness({"unus", "salus"}, own) == 2
    assert index.uniqueness({"unus", "salus", "spes"}, own) == 1  # only Cicero's last sentence
    # fatorum immoto ~ immota manet fatis: 'immotus' (the lemmatiser reads 'fatorum' as fatus); other than the two
    # lines themselves, Cicero's 'immota mente'
    own = [{"fatus", "immotus", "diuido", "limes", "mundus"}, {"immotus", "maneo", "fatum", "lauinia", "coniunx"}]
    assert index.uniqueness({"immotus"}, own) == 1
    assert index.uniqueness({"nosuchlemma", "salus"}) == 0
    assert index.uniqueness(set()) is None


def test_the_shipped_latin_library_index_counts_real_parallels():
    index = R.shipped_index()
    if index is None:
        pytest.skip("data/reference/latin-library-loci is not installed")
    assert index.manifest["source"] == "latin_library.tar.xz" and index.n_loci > 500_000
    r = registry.build("channels").fit(["verg. aen. 2.354", "verg. aen. 7.314"],
                                        ["una salus victis, nullam sperare salutem.",
                                         "atque immota manet fatis Lavinia coniunx:"])
    top, scores, side = r.search_explained(["Spes una salutis", "Fatorum immoto divisit limite mundum:"], 1)
    salus = r.explain(0, int(top.indices[0, 0]), scores[0, 0], side)
    fatum = r.explain(1, int(top.indices[1, 0]), scores[1, 0], side)
    assert salus["uniqueness_corpus"].startswith("latin-library-loci (") and fatum["uniqueness"] is not None
    assert (salus["uniqueness"], fatum["uniqueness"]) == EXPECTED_SHIPPED
    assert len(index.holding({"unus", "salus"})) == 168 and len(index.holding({"immotus"})) == 116


# Measured with the shipped index (1,158,067 loci): 168 loci hold 'unus' and 'salus', one of them Aeneid 2.354 itself
# (a locus with exactly its content lemmas), so 167 others; 116 hold 'immotus' (what 'Fatorum immoto' and 'immota
# ... fatis' share: the lemmatiser reads 'fatorum' as fatus), Aeneid 7.314 among them, so 115 others.
EXPECTED_SHIPPED = (167, 115)
