"""The multi-channel retriever's source side built in bulk (detection/channels/bulk_features.py) equals the
text-by-text path it replaced (channels.features + FeatureSpace.matrix, edit_relation over every form) on real
Lucan and Virgil lines: the same matrices value for value, the same variants, and the same lists before/after."""
from pathlib import Path

import numpy as np
import pytest

from detection.channels import channel_features as C
from detection.channels.bulk_features import VariantIndex, source_index
from detection.channels.pairwise import MultiChannelRetriever
from detection.latin.readers import ReadReport, read_tess

TESS = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "latin_texts" / "tesserae"


def _lines(stem, limit, books=None):
    units = [u for u in read_tess(TESS / f"{stem}.tess", report=ReadReport())
             if books is None or int(u.ref.split(".")[0]) in books]
    return [u.text for u in units][:limit]


@pytest.fixture(scope="module")
def texts():
    return _lines("lucan.bellum_civile", 150, books={2}), _lines("vergil.aeneid", 3000)


def _old_matrices(docs, rarity, rare_min):
    feats = [C.features(d, rarity, rare_min=rare_min, side="source", synonyms=C.Relation(), variants=C.Relation())
             for d in docs]
    idf = C.sound_idf_table(feats)
    for cf in feats:
        C.weigh_sound(cf, idf)
    space = C.FeatureSpace()
    return {c: space.matrix(c, feats, grow=True).T.tocsr() for c in C.SPARSE_CHANNELS}, space, idf, feats


def _by_key(W, vocab):
    """{feature: (sources, weights)} of a (features x sources) matrix."""
    W = W.tocsr()
    W.sort_indices()
    return {key: (W.indices[W.indptr[j]:W.indptr[j + 1]].tolist(), W.data[W.indptr[j]:W.indptr[j + 1]].tolist())
            for key, j in vocab.items()}


@pytest.mark.parametrize("rarity_from", ["fitted texts", "vectors"])
def test_bulk_matrices_equal_the_text_by_text_ones(texts, rarity_from):
    _q, sources = texts
    docs = C.analyse(sources)
    if rarity_from == "vectors":
        rarity = MultiChannelRetriever(semantic=False).fit(["a"], ["arma uirumque cano"]).rarity
        assert rarity.source.startswith("word vectors")
    else:
        ref = C.Rarity.from_docs(docs[:40])  # a small reference, where five common lemmas weigh 0 (dropped)
        common = sorted(ref.counts, key=lambda lem: -ref.counts[lem])[:5]
        rarity = C.Rarity({**ref.counts, **{lem: ref.total for lem in common}}, ref.total)
        assert all(rarity(lem) == 0 for lem in common)
    rare_min = 7.0 if rarity_from == "vectors" else 4.0
    old, old_space, old_idf, feats = _old_matrices(docs, rarity, rare_min)
    new = source_index(docs, rarity, rare_min=rare_min, channels=C.SPARSE_CHANNELS)
    assert new.sound_idf == old_idf
    for ch in C.SPARSE_CHANNELS:
        assert new.matrices[ch].shape[1] == len(sources)
        got, want = _by_key(new.matrices[ch], new.space.vocab[ch]), _by_key(old[ch], old_space.vocab[ch])
        assert got == want, ch  # every feature, its sources and their float32 weights, bit for bit
        assert len(want) > 50, ch
    postings = {lem: js for lem, (js, _w) in _by_key(new.lemma_postings, new.space.vocab["lemma"]).items()}
    assert postings == {lem: [j for j, cf in enumerate(feats) if lem in cf.feats["lemma"]]
                        for lem in old_space.vocab["lemma"]}


def test_variants_are_edit_relations_pairs_with_a_source_form(texts):
    queries, sources = texts
    q_forms = {t for d in C.analyse(queries) for t in d.tokens}
    s_forms = {t for d in C.analyse(sources) for t in d.tokens}
    old = C.edit_relation(sorted(q_forms | s_forms))
    new = VariantIndex(s_forms).relation(q_forms)
    pairs = 0
    for w in q_forms:
        assert new.related(w) == old.related(w) & s_forms, w
        pairs += len(new.related(w))
    assert pairs > 20
    assert VariantIndex(["adfero", "affert"]).relation(["affero"]).related("affero") == {"adfero", "affert"}


class _TextByText(MultiChannelRetriever):
    """The retriever with its source side built as before channel_index (per text; variants over every form)."""

    def fit(self, source_ids, source_texts, *, progress=None):
        super().fit(source_ids, source_texts, progress=progress)
        mats, self._space, self._sound_idf, self._sfeats = _old_matrices(self._sdocs, self.rarity, self.rare_min)
        self._smat = {c: mats[c] for c in self.sparse_on}
        sdocs = self._sdocs

        class _AllForms:
            @staticmethod
            def relation(forms):
                return C.edit_relation(sorted(set(forms) | {t for d in sdocs for t in d.tokens}))

        self._variants = _AllForms()
        return self


@pytest.mark.parametrize("params", [{}, {"profile": "prose", "semantic": False, "budget": 300}])
def test_lists_and_explanations_are_the_same_before_and_after(texts, params):
    queries, sources = texts
    ids = [f"verg. aen. {i}" for i in range(len(sources))]
    new = MultiChannelRetriever(**params).fit(ids, sources)
    old = _TextByText(**params).fit(ids, sources)
    a, ch_a, side_a = new.search_explained(queries, 100)
    b, ch_b, side_b = old.search_explained(queries, 100)
    assert np.array_equal(a.indices, b.indices)
    assert np.allclose(a.scores, b.scores, rtol=0, atol=1e-6, equal_nan=True)
    assert np.allclose(ch_a, ch_b, rtol=0, atol=1e-6)
    assert (a.indices[:, 0] >= 0).all()
    for qi in (0, 7, 31):
        for rank in (0, 5):
            j = int(a.indices[qi, rank])
            assert new.explain(qi, j, ch_a[qi, rank], side_a) == old.explain(qi, j, ch_b[qi, rank], side_b)
