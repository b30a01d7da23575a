"""The one Latin pipeline: the retrievers and the benchmark's lexical rule/audit cut words the same way, and
segments mixing Latin and Greek are kept (Latin indexed, Greek passed through)."""
from detection.latin import overlap as lexical
from detection.latin.analysis import Analyzer, latin_lemmas, latin_tokens
from detection.latin.loci_corpus import build_corpus
from detection.latin.normalize import has_latin_word
from detection.methods import get_retriever

CICERO_MIXED = [
    "σκήψεις atque ἀναβολαί; sed nescio an ταὐτόματον ἡμῶν.",
    "Terentia tibi salutem, καὶ Κικέρων ὁ μικρὸς ἀσπάζεται Τίτον τὸν ̓Αθηναῖον.",
]


def test_putasne_is_cut_the_same_by_the_retrievers_and_the_lexical_rule():
    text = "putasne hoc fieri"
    assert latin_tokens(text) == ["putas", "ne", "hoc", "fieri"]
    retriever_terms = Analyzer("surface", stopwords=False)([text])[0]
    rule_terms = lexical.analyse(text, stop=frozenset()).content_surface
    assert tuple(retriever_terms) == rule_terms == ("putas", "ne", "hoc", "fieri")
    # lemmas too: the retrievers' lemma analyser and the audit's content lemmas agree
    retriever_lemmas = Analyzer("lemma", stopwords=False)([text])[0]
    assert tuple(retriever_lemmas) == lexical.analyse(text, stop=frozenset()).content
    # with the stoplist the enclitic goes, the host stays, on both sides
    assert "putas" in lexical.analyse(text).content_surface and "ne" not in lexical.analyse(text).content_surface
    assert "ne" not in Analyzer("surface")([text])[0]


def test_words_that_only_end_in_ne_stay_whole():
    assert latin_tokens("carmine bene") == ["carmine", "bene"]
    assert latin_tokens("uirumque cano") == ["uirum", "que", "cano"]


def test_mixed_latin_greek_segments_keep_latin_lemmas_and_greek_forms():
    assert all(has_latin_word(t) for t in CICERO_MIXED)
    assert not has_latin_word("καὶ Κικέρων ὁ μικρὸς")
    toks = latin_tokens(CICERO_MIXED[1])
    lems = latin_lemmas(toks)
    assert toks[:3] == ["terentia", "tibi", "salutem"]
    assert lems[2] == "salus"  # Latin lemmatised
    assert "κικερων" in toks and "κικερων" in lems  # Greek passed through unchanged (accents folded)
    # retrievable by either its Latin or its Greek words
    r = get_retriever("bm25-lemma").fit(["att.2.9.4", "other"], [CICERO_MIXED[1], "arma uirumque cano"])
    assert r.search(["salus Terentiae"], 1).ids(0) == ["att.2.9.4"]
    assert r.search(["ὁ μικρὸς Κικέρων"], 1).ids(0) == ["att.2.9.4"]


def test_build_corpus_keeps_mixed_script_segments(tmp_path):
    texts = tmp_path / "texts"
    texts.mkdir()
    (texts / "cicero.letters_to_atticus.tess").write_text(
        "<cic. att. 1.1.1> " + CICERO_MIXED[0] + " " + CICERO_MIXED[1] + "\n"
        "<cic. att. 1.1.2> καὶ Κικέρων ὁ μικρὸς ἀσπάζεται.\n", encoding="utf-8")
    stats = build_corpus(texts, tmp_path / "out",
                         works={"cicero.letters_to_atticus": ("source", "Cicero", "cic. att.", False)})
    rows = (tmp_path / "out" / "source.csv").read_text(encoding="utf-8")
    assert "σκήψεις atque ἀναβολαί" in rows and "Terentia tibi salutem, καὶ Κικέρων" in rows
    assert stats.skipped == {"no Latin word": 1}  # only the all-Greek segment, counted and reported
    assert "has no word in Latin script" in stats.messages[0]


def test_table1_counts_tokens_with_the_one_analyser(tmp_path):
    """Table 1's token counts are `latin_tokens` counts: `putasne` is two tokens (host + -ne), as the retrievers
    index it; the plain tokenizer without the lemmatiser kept it whole."""
    from detection.latin.analysis import latin_tokens
    from detection.latin.normalize import tokenize

    text = "putasne me uenturum esse"
    assert len(latin_tokens(text)) == 5 and len(tokenize(text)) == 4
    texts = tmp_path / "texts"
    texts.mkdir()
    (texts / "cicero.letters_to_atticus.tess").write_text(f"<cic. att. 1.1.1> {text}\n", encoding="utf-8")
    stats = build_corpus(texts, tmp_path / "out",
                         works={"cicero.letters_to_atticus": ("source", "Cicero", "cic. att.", False)})
    cicero = next(r for r in stats.rows if r.author == "Cicero")
    assert (cicero.segments, cicero.min_tokens, cicero.max_tokens) == (1, 5, 5)
