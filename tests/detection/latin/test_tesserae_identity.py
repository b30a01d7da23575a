"""The vectorised Tesserae retriever returns exactly what the per-pair implementation returned.

Same top-k lists (ties by source index) and bit-identical float32 scores, on real texts (Jerome against
Virgil, Statius and Cicero, whose long prose sentences need more than one 52-rank window) and on random
corpora built to hit the edge cases: repeated lemmas, equal frequencies, duplicate sources (exact ties),
segments of up to 170 tokens (four windows), queries with no candidate, k larger than the candidates.
"""
import random

import numpy as np
import pytest

from detection.latin.analysis import Analyzer
from detection.latin.readers import read_tess
from detection.latin.segment import segment_units
from detection.methods import get_retriever
from detection.methods.lexical.tesserae import WINDOW, TesseraeRetriever
from detection.methods.lexical.tesserae_reference import TesseraeReference


class _Lemmas:
    """Analyzer stand-in for corpora given as lemma lists (the random corpora below)."""

    def __call__(self, docs, progress=None):
        return [list(d) for d in docs]


def _pair(src_ids, src, queries, k, stop_top=10, analyzer=None):
    new = TesseraeRetriever(stop_top=stop_top, block_size=7)
    ref = TesseraeReference(stop_top=stop_top)
    if analyzer is not None:
        new.analyzer = ref.analyzer = analyzer
    a = new.fit(src_ids, src).search(queries, k)
    b = ref.fit(src_ids, src).search(queries, k)
    return a, b


def _assert_identical(a, b):
    assert a.indices.dtype == b.indices.dtype == np.int32 and a.scores.dtype == b.scores.dtype == np.float32
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.scores, b.scores)  # nan where both pad; bit-identical elsewhere


@pytest.fixture(scope="module")
def real_texts(data_dir):
    tess = data_dir / "latin_texts" / "tesserae"
    src = []
    for stem, prefix, verse in [("vergil.aeneid", "verg. aen.", True), ("statius.thebaid", "stat. theb.", True),
                                ("cicero.de_officiis", "cic. off.", False)]:
        src += segment_units(read_tess(tess / f"{stem}.tess"), prefix, verse=verse)
    queries = segment_units(read_tess(tess / "jerome.epistulae.tess"), "hier. epist.", verse=False)
    lemmas = Analyzer("lemma", 1, stopwords=False)
    longest = sorted(queries, key=lambda s: -len(s.text))[:60]  # long sentences: ranks past the first windows
    q = [s.text for s in queries[:300] + longest]
    assert max(len(x) for x in lemmas(q)) > 3 * WINDOW
    return [s.seg_id for s in src], [s.text for s in src], q


@pytest.mark.parametrize("k", [1, 25])
def test_real_texts_identical(real_texts, k):
    ids, texts, queries = real_texts
    a, b = _pair(ids, texts, queries, k)
    assert (a.indices[:, 0] >= 0).mean() > 0.9
    _assert_identical(a, b)


def _random_corpus(rng: random.Random, n: int, vocab: int, max_len: int) -> list[list[str]]:
    words = [f"w{i}" for i in range(vocab)]
    weights = [1.0 / (i + 1) for i in range(vocab)]  # Zipf-like: frequent and rare lemmas, repeats
    docs = []
    for _ in range(n):
        length = rng.choice([0, 1, 2, 3, 5, 8, 13, 30, 60, 110, 170]) if rng.random() < 0.3 else rng.randint(1, max_len)
        docs.append(rng.choices(words, weights, k=length))
    return docs


@pytest.mark.parametrize("seed", range(6))
def test_random_corpora_identical(seed):
    rng = random.Random(seed)
    src = _random_corpus(rng, 300, 60 + 40 * seed, 40)
    src += [list(d) for d in rng.sample(src, 30)]  # duplicate sources: equal scores, ties by index
    queries = _random_corpus(rng, 80, 60 + 40 * seed, 40) + [["nowhere", "none"], []]
    for k in (1, 3, 50, 1000):
        a, b = _pair([f"s{i}" for i in range(len(src))], src, queries, k, stop_top=seed % 3 * 2,
                     analyzer=_Lemmas())
        _assert_identical(a, b)
    assert np.all(a.indices[-2:] == -1)


def test_long_segments_use_several_windows():
    """Ranks past 52 and 104 decide the distance when the shared lemmas are frequent in long segments."""
    filler = [f"f{i}" for i in range(120)]  # 120 distinct lemmas, each rare (rank order = position)
    common = ["a", "b"]
    src = [filler[:110] + common, filler[:3] + ["x"] * 5 + common, common + ["y"]]
    query = [filler[60:] + ["a", "z", "b"]]
    extra = [[c] * 40 for c in common]  # make "a" and "b" the most frequent lemmas, ranked last
    a, b = _pair(["s0", "s1", "s2", "s3", "s4"], src + extra, query, 5, stop_top=0, analyzer=_Lemmas())
    _assert_identical(a, b)
    assert a.indices[0, 0] == 0  # the long source shares 50 rare lemmas


def test_registry_passes_n_jobs_and_results_do_not_depend_on_it(real_texts):
    ids, texts, queries = real_texts
    one = get_retriever("tesserae", block_size=64).fit(ids, texts).search(queries[:200], 10)
    two = get_retriever("tesserae", block_size=64, n_jobs=2).fit(ids, texts).search(queries[:200], 10)
    _assert_identical(one, two)


def test_ranges_of_queries_equal_the_whole_search(real_texts):
    """A shard scores its queries with the statistics of the whole query corpus, so shards concatenate
    to the unsharded result."""
    ids, texts, queries = real_texts
    r = TesseraeRetriever(block_size=32).fit(ids, texts)
    whole = r.search(queries, 10)
    parts = [r.search_range(queries, 10, a, min(a + 70, len(queries))) for a in range(0, len(queries), 70)]
    assert r._state is not None and r._state[0] is r._queries[1]  # built once, kept across the ranges
    np.testing.assert_array_equal(np.concatenate([p.indices for p in parts]), whole.indices)
    np.testing.assert_array_equal(np.concatenate([p.scores for p in parts]), whole.scores)
    alone = r.search(queries[70:140], 10)  # a slice searched on its own has other statistics
    assert not np.array_equal(alone.scores, whole.scores[70:140], equal_nan=True)
