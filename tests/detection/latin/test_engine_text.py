
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from detection.latin.errors import InputError
from detection.latin.lemmatize import get_lemmatizer, lemmatize_corpus
from detection.latin.normalize import latin_share, normalize_text, tokenize
from detection.latin.readers import ReadReport, read_plain, read_segments_csv, read_tei, read_tess
from detection.latin.segment import Unit, segment_units, sentence_spans, split_sentences
from detection.latin.stopwords import LATIN_STOPWORDS


def test_normalize_and_enclitics():
    assert normalize_text("Arma virúmque cāno, Troiae; IVLIVS!") == "arma uirumque cano troiae iulius"
    assert tokenize("Arma virumque cano") == ["arma", "uirum", "que", "cano"]
    assert tokenize("atque quoque itaque") == ["atque", "quoque", "itaque"]
    lem = get_lemmatizer()
    assert tokenize("facisne carmine aliaue", lem.is_known) == ["facis", "ne", "carmine", "alia", "ue"]
    assert "et" in LATIN_STOPWORDS and "que" in LATIN_STOPWORDS


def test_lemmatizer_fixes_simplemma_errors():
    lem = get_lemmatizer()
    assert lem.lemmatize(["cano", "uoce", "faucibus", "haesit", "uox", "steterunt"]) == [
        "cano", "uox", "fauces", "haereo", "uox", "sto"]


def test_lemma_cache(tmp_path):
    toks = [["uox", "faucibus"], ["haesit"]]
    a = lemmatize_corpus(toks, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("lemmas-*.json"))) == 1
    assert lemmatize_corpus(toks, cache_dir=tmp_path) == a == [["uox", "fauces"], ["haereo"]]


def test_sentence_split_abbreviations_and_ellipsis():
    assert split_sentences("M. Tullius uenit. Quid agis? Nihil!") == ["M. Tullius uenit.", "Quid agis?", "Nihil!"]
    assert split_sentences("Sic ore locuta est... Tum abiit.") == ["Sic ore locuta est...", "Tum abiit."]


def test_verse_ids_follow_benchmark_style():
    units = [Unit("2.773", "visa mihi ante oculos et nota maior imago."),
             Unit("2.774", "Obstipui, steteruntque comae et vox faucibus haesit."),
             Unit("2.775", "Tum sic adfari. Et curas"), Unit("2.776", "his demere dictis.")]
    segs = segment_units(units, "verg. aen.", verse=True)
    assert [s.seg_id for s in segs] == ["verg. aen. 2.773.1", "verg. aen. 2.774.1", "verg. aen. 2.775.1",
                                         "verg. aen. 2.775.2"]
    assert segs[3].text == "Et curas / his demere dictis." and segs[3].ref == "2.775-2.776"


_word = st.text(alphabet="abcdefgh", min_size=1, max_size=6)
_sentence = st.lists(_word, min_size=1, max_size=6).map(" ".join)
_punct = st.sampled_from([".", "!", "?", "...", ";", ","])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_sentence, _punct), min_size=1, max_size=8), st.integers(1, 4))
def test_segmentation_round_trip(parts, n_units):
    text = " ".join(s + p for s, p in parts)
    spans = sentence_spans(text)
    # round trip: the sentences, re-joined, are the text
    assert " ".join(text[a:b] for a, b in spans) == " ".join(text.split())
    # the same text cut into units: sentences and ids are stable and unique
    words = text.split()
    step = max(1, len(words) // n_units)
    units = [Unit(str(i + 1), " ".join(words[j:j + step])) for i, j in enumerate(range(0, len(words), step))]
    segs = segment_units(units, "x.")
    assert " ".join(s.text for s in segs) == " ".join(text.split())
    assert len({s.seg_id for s in segs}) == len(segs)
    for s in segs:  # every id points at the unit where the sentence starts
        unit = s.seg_id.split()[-1].rsplit(".", 1)[0]
        first = s.text.split()[0]
        assert first in next(u.text for u in units if u.ref == unit).split()


def _write(path, text, encoding="utf-8"):
    path.write_bytes(text.encode(encoding))
    return path


def test_csv_reader_ok_and_package_examples(tmp_path, data_dir):
    segs = read_segments_csv(data_dir / "locisimiles/package_examples/vergil_samples.csv")
    assert len(segs) == 10 and segs[2].seg_id == "verg. aen. 4.172"
    p = _write(tmp_path / "a.csv", "seg_id,text,author\na 1,Arma uirumque cano.,Verg\n")
    assert read_segments_csv(p)[0].author == "Verg"


@pytest.mark.parametrize("content,needle,line", [
    ("id,text\na,Arma\n", "missing column(s) seg_id", 1),
    ("seg_id,text\na,Arma\na,Cano\n", "duplicate seg_id 'a' (first on line 2)", 3),
    ("seg_id,text\na,Arma\nb,\n", "empty text", 3),
    ("seg_id,text\na,\"Arma\ncano\"\nb,μῆνιν ἄειδε θεὰ\n", "not in Latin script", 4),
])
def test_csv_reader_errors_name_file_and_line(tmp_path, content, needle, line):
    p = _write(tmp_path / "bad.csv", content)
    with pytest.raises(InputError) as ei:
        read_segments_csv(p)
    assert needle in str(ei.value) and str(p) in str(ei.value) and ei.value.line == line


def test_csv_unknown_encoding_and_skip_counts(tmp_path, data_dir):
    p = _write(tmp_path / "latin1.csv", "seg_id,text\na,Arma\nb,caelum \xe6ternum\n", "latin-1")
    with pytest.raises(InputError, match=r"line 3: not UTF-8"):
        read_segments_csv(p)
    rep = ReadReport()
    p2 = _write(tmp_path / "mixed.csv", "seg_id,text\na,Arma\na,Cano\nb,\nc,Troiae\n")
    segs = read_segments_csv(p2, report=rep)
    assert [s.seg_id for s in segs] == ["a", "c"]
    assert rep.skipped == {"duplicate id": 1, "empty text": 1} and rep.total_skipped == 2
    with pytest.raises(InputError, match="missing column"):  # the inspector corpus uses 'id'
        read_segments_csv(data_dir / "locisimiles/inspector_test_cases/test_corpus_la.csv")


def test_tess_reader_and_errors(tmp_path, data_dir):
    units = read_tess(data_dir / "latin_texts/tesserae/vergil.eclogues.tess")
    assert units[0].ref == "1.1" and units[0].text.startswith("Tityre")
    p = _write(tmp_path / "x.tess", "<verg. aen. 1.1>\tArma\nno reference here\n")
    with pytest.raises(InputError, match=r"x.tess, line 2"):
        read_tess(p)


def test_tei_reader_strips_apparatus(data_dir):
    units = read_tei(data_dir / "latin_texts/csel/lactantius/stoa0171.stoa006.opp-lat1.xml")
    assert units[0].ref == "1.1" and units[0].text.startswith("Animaduerti saepe, Donate")
    assert not any("codex" in u.text.lower() and "saec" in u.text.lower() for u in units[:20])


def test_plain_reader(tmp_path):
    p = _write(tmp_path / "t.txt", "Arma uirumque cano.\nTroiae qui primus.\n\nAlter paragraphus.\n")
    units = read_plain(p)
    assert [u.ref for u in units] == ["1", "2"] and units[1].line == 4


def test_latin_share():
    assert latin_share("arma uirumque") == 1.0 and latin_share("μῆνιν ἄειδε") == 0.0
