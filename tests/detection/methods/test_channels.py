"""The multi-channel retriever on real lines (Lucan -> Aeneid parallels from the commentaries): each channel's
matches named, the union budget, the deterministic cut, the explanations and the parameter errors."""
import inspect
import json

import numpy as np
import pytest

from detection.channels import channel_features as C
from detection.channels.pairwise import ChannelError, MultiChannelRetriever
from detection.methods import ParamError, registry

SRC_IDS = ["verg. aen. 1.257", "verg. aen. 7.314", "verg. aen. 1.1", "verg. aen. 12.85", "verg. aen. 6.427",
           "verg. aen. 2.354", "verg. aen. 8.645"]
SRC = ['"Parce metu, Cytherea: manent immota tuorum', "atque immota manet fatis Lavinia coniunx:",
       "Arma virumque cano, Troiae qui primus ab oris", "Circumstant properi aurigae manibusque lacessunt",
       "infantumque animae flentes, in limine primo;", "una salus victis, nullam sperare salutem.",
       "rorabant sanguine vepres."]
QUERIES = ["Fatorum immoto divisit limite mundum:",  # luc. 2.11 ~ aen. 7.314 (Viansino)
           "Primo in limine vitae",                    # luc. 2.106 ~ aen. 6.427 (Fantham)
           "Spes una salutis",                         # luc. 2.113 ~ aen. 2.354 (Fantham)
           "Arma virumque canam"]


@pytest.fixture(scope="module")
def run():
    r = registry.build("channels").fit(SRC_IDS, SRC)
    top, scores, side = r.search_explained(QUERIES, 7)
    return r, top, scores, side


def _explain(run, qi, source_id):
    r, top, scores, side = run
    j = SRC_IDS.index(source_id)
    rank = list(top.indices[qi]).index(j)
    return r.explain(qi, j, scores[qi, rank], side), rank


def _channel(ex, name):
    return next(c for c in ex["channels"] if c["name"] == name)


def test_each_commentary_parallel_comes_first(run):
    _r, top, _s, _side = run
    assert [SRC_IDS[top.indices[i, 0]] for i in range(4)] == [
        "verg. aen. 7.314", "verg. aen. 6.427", "verg. aen. 2.354", "verg. aen. 1.1"]


def test_channels_name_their_matches(run):
    ex, _ = _explain(run, 0, "verg. aen. 7.314")
    assert _channel(ex, "rare")["matches"] == [["immoto", "immota"]]  # one rare shared lemma is enough
    assert _channel(ex, "edit")["matches"] == [["immoto", "immota"]]  # one letter apart
    sound = _channel(ex, "sound")  # fired (scattered trigrams), but no two words of these lines sound alike
    assert sound["score"] > 0 and ["fatorum", "fatis"] not in sound["matches"]
    ex, _ = _explain(run, 1, "verg. aen. 6.427")
    assert sorted(map(tuple, _channel(ex, "lemma")["matches"])) == [("limine", "limine"), ("primo", "primo")]
    assert sorted(map(tuple, _channel(ex, "form")["matches"])) == [("limine", "limine"), ("primo", "primo")]
    ex, _ = _explain(run, 2, "verg. aen. 2.354")
    assert ["salutis", "salus"] in _channel(ex, "lemma")["matches"]
    assert _channel(ex, "order")["matches"] == [["una salutis", "una salus"]]  # near and in the same order
    assert _channel(ex, "position")["matches"] == [["salutis", "salutem"]]  # both at the line's end
    ex, _ = _explain(run, 3, "verg. aen. 1.1")
    assert _channel(ex, "quote")["matches"] == [["arma uirum que", "arma uirum que"]]  # 3 consecutive forms
    assert ["canam", "cano"] in _channel(ex, "lemma")["matches"]
    assert _channel(ex, "semantic")["score"] > 0.5


def test_sound_pairs_only_words_that_sound_alike():
    """Lucan 1.1 against a line with emathios-like endings: words sharing an ending or a syllable are no pair."""
    from detection.channels.fusion import SOUND_ALIKE
    from detection.channels.fusion import alike as _alike

    q, s = C.analyse(["Bella per Emathios plus quam ciuilia campos", "Sallentinos milite campo ciuili bella"])
    everything = set(C.char_trigrams("x"))
    for d in (q, s):
        for t in d.tokens:
            everything.update(C.char_trigrams(t))
    pairs = _alike(q, s, everything)
    assert ["emathios", "sallentinos"] not in pairs and ["ciuilia", "milite"] not in pairs
    assert ["bella", "bella"] in pairs and ["ciuilia", "ciuili"] in pairs and ["campos", "campo"] in pairs
    assert pairs[0] == ["bella", "bella"] and SOUND_ALIKE == 0.4  # most alike first; the threshold measured


def test_explanation_contract(run):
    ex, rank = _explain(run, 2, "verg. aen. 2.354")
    json.dumps(ex)
    assert set(ex) == {"channels", "uniqueness", "uniqueness_corpus", "rarity", "query_lines", "source_lines"}
    _r, top, _s, _side = run
    total = sum(c["contribution"] for c in ex["channels"])
    assert total == pytest.approx(float(top.scores[2, rank]), rel=1e-4)  # the contributions add up to the score
    for c in ex["channels"]:
        assert set(c) == {"name", "score", "weight", "contribution", "matches"}
        assert c["contribution"] == pytest.approx(c["weight"] * c["score"], rel=1e-4)
    assert ex["rarity"]["salutis"] > 0
    r = run[0]
    if r._reference is not None:  # over The Latin Library (tests/detection/methods/test_reference_loci.py)
        assert ex["uniqueness"] == 167 and ex["uniqueness_corpus"].startswith("latin-library-loci")
    reference, r._reference = r._reference, None  # without the reference index: over the searched sources
    try:
        ex = r.explain(2, SRC_IDS.index("verg. aen. 2.354"), run[2][2, rank], run[3])
    finally:
        r._reference = reference
    assert ex["uniqueness"] == 0  # no other source line holds both 'salus' and 'unus'
    assert ex["uniqueness_corpus"] == "the searched sources (7)"


def test_uniqueness_counts_the_other_sources_with_the_same_words(monkeypatch):
    monkeypatch.setattr("detection.channels.pairwise.shipped_index", lambda: None)  # no reference index: the
    src = ["arma uirum cano", "arma uirum canit", "arma uirosque", "uirum arma tenet", "mare altum"]  # sources
    r = MultiChannelRetriever(vectors=None, semantic=False, synonym=False).fit([str(i) for i in range(5)], src)
    top, scores, side = r.search_explained(["arma uirumque cano"], 5)
    ex = {int(j): r.explain(0, int(j), scores[0, k], side) for k, j in enumerate(top.indices[0]) if j >= 0}
    assert ex[0]["uniqueness"] == 1  # arma + uir + cano: only line 1 ('canit') holds them too
    assert ex[3]["uniqueness"] == 3  # arma + uir: lines 0, 1 and 2 ('uirosque') hold them too
    assert r.notes[0] == ("uniqueness counted over the searched sources: the reference index "
                          "data/reference/latin-library-loci is not installed")

def test_synonym_channel_from_the_vectors():
    r = registry.build("channels").fit(["a", "b", "c"], ["stringit ensis acutus", "mare altum", "flumina rapida"])
    top, scores, side = r.search_explained(["gladium", "fluuius"], 1)
    assert list(top.indices[:, 0]) == [0, 2]
    assert _channel(r.explain(0, 0, scores[0, 0], side), "synonym")["matches"] == [["gladium", "ensis"]]
    assert _channel(r.explain(1, 2, scores[1, 0], side), "synonym")["matches"] == [["fluuius", "flumina"]]


def test_vector_synonyms_are_kept_in_the_cache_folder(tmp_path):
    """The neighbours searched once are written beside the lemma cache; a fresh process (the memo emptied) reads
    them instead of searching again, and gets the same relation."""
    from detection.channels.pairwise import DEFAULT_VECTORS, _vectors_or_none

    wv = _vectors_or_none(DEFAULT_VECTORS)
    lemmas = ["gladius", "ensis", "flumen", "fluuius", "mare"]
    C._NEIGHBOURS.clear()
    first = C.vector_synonyms(wv, lemmas, store=tmp_path)
    [table] = (tmp_path / "neighbours").glob("*.json")
    stored = json.loads(table.read_text(encoding="utf-8"))
    assert set(stored) == {w for w in lemmas if w in wv} and "ensis" in first.related("gladius")
    C._NEIGHBOURS.clear()
    table.write_text(json.dumps({**stored, "gladius": ["mare"]}), encoding="utf-8")  # read, not searched again
    assert C.vector_synonyms(wv, lemmas, store=tmp_path).related("gladius") == {"mare"}
    C._NEIGHBOURS.clear()


def test_edit_relation_and_assimilation():
    rel = C.edit_relation(["inmoto", "immoto", "immota", "adfero", "affero", "caelum"])
    assert rel.related("inmoto") == {"immoto", "immota"}  # inm- is imm- assimilated; immota one letter off
    assert "affero" in rel.related("adfero")  # equal once assimilated
    assert rel.related("caelum") == frozenset()


def test_union_budget_takes_every_channels_best():
    """Budget 2, two channels: each channel's best is in, although the fused score alone keeps two others; with
    the default budget (1,000) both channels' lists fit and the cut at k=2 keeps the two best scores."""
    src = ["arma uirum cano", "arma uirum canit", "immota", "fatis immota"]
    q = ["arma uirum inmoto"]
    kw = dict(vectors=None, semantic=False, synonym=False, rare=False, form=False, quote=False, sound=False,
              order=False, position=False, edit_weight=0.01, context_weight=0)
    fused = MultiChannelRetriever(candidates="fused", **kw).fit(["0", "1", "2", "3"], src).search(q, 2)
    union = MultiChannelRetriever(candidates="union", budget=2, **kw).fit(["0", "1", "2", "3"], src).search(q, 2)
    assert list(fused.indices[0]) == [0, 1]  # the lemma channel dominates the fused score
    assert list(union.indices[0]) == [0, 2]  # lemma's best, then edit's best (tie with 3: the lower index)
    assert union.scores[0][0] > union.scores[0][1] > 0
    deep = MultiChannelRetriever(candidates="union", **kw).fit(["0", "1", "2", "3"], src)
    assert list(deep.search(q, 2).indices[0]) == [0, 1] and list(deep.search(q, 4).indices[0][:2]) == [0, 1]


def test_the_budget_goes_round_robin_over_the_channels_lists():
    """The candidates are the budget's worth of sources with the best rank in any channel's own list (rank 1 of
    every channel, then rank 2 ...; equal ranks: the lower index): a channel with few sources that score (quote,
    position) or the same ones as another (lemma, form) leaves its share to the deep ones (sound, semantic).
    Checked against each channel's ranking computed here from its score block, on 40 Aeneid lines."""
    from core.paths import shared_data_dir
    from detection.latin.readers import read_tess

    tess = shared_data_dir() / "latin_texts" / "tesserae" / "vergil.aeneid.tess"
    if not tess.exists():
        pytest.skip("shared data not available")
    lines = [u.text for u in read_tess(tess)][:40]
    r = MultiChannelRetriever(budget=12, context_weight=0).fit([str(i) for i in range(40)], lines)
    top = r.search(QUERIES, 12)
    _, _, qmat, qdense = r._query_side(QUERIES)
    chans = [c for c in C.CHANNELS if c in r.weights]
    blocks = {c: r._channel_block(c, qmat, qdense, 0, len(QUERIES))[0] for c in chans}
    for q in range(len(QUERIES)):
        best = {}
        for c in chans:  # the channel's own list: score > 0, best first, ties to the lower index
            order = sorted((j for j in range(40) if blocks[c][q, j] > 0), key=lambda j: (-blocks[c][q, j], j))
            for rank, j in enumerate(order):
                best[j] = min(best.get(j, rank), rank)
        chosen = sorted(best, key=lambda j: (best[j], j))[:12]
        assert set(top.indices[q][top.indices[q] >= 0].tolist()) == set(chosen)
        deepest = max(best[j] for j in chosen)
        assert deepest >= max(1, 12 // len(chans))  # deeper than an even split of the budget (its rank 0..quota-1)


def test_top_k_is_a_prefix_of_a_deeper_list_at_tied_scores():
    src = ["arma uirum"] * 30 + ["arma"] * 30
    r = MultiChannelRetriever(vectors=None, semantic=False, synonym=False).fit([str(i) for i in range(60)], src)
    a, b = r.search(["arma uirum"], 10), r.search(["arma uirum"], 50)
    assert list(a.indices[0]) == list(b.indices[0][:10]) == list(range(10))
    bm = registry.build("bm25-lemma").fit([str(i) for i in range(60)], src)
    a, b = bm.search(["arma uirum"], 10), bm.search(["arma uirum"], 50)
    assert list(a.indices[0]) == list(b.indices[0][:10]) == list(range(10))


def test_factory_signature_equals_the_declared_parameters():
    spec = registry.get_spec("channels")
    sig = [p for p in inspect.signature(MultiChannelRetriever.__init__).parameters if p != "self"]
    assert sig == [p.name for p in spec.params] + list(spec.internal)


@pytest.mark.parametrize("params, key", [
    ({"sound_weight": -1}, "sound_weight"),
    ({"sound_weight": "loud"}, "sound_weight"),
    ({"unit": "line"}, "unit"),
])
def test_bad_parameters_are_refused_by_name(params, key):
    with pytest.raises(ParamError, match=key):
        registry.validate("channels", params)


def test_bad_combinations_and_synonym_names():
    with pytest.raises(ChannelError, match="every channel is off"):
        registry.build("channels", {c: False for c in C.CHANNELS if c != "encoder"})
    with pytest.raises(ChannelError, match="a name, not a path"):
        registry.build("channels", {"synonyms": "../../etc/passwd"})
    with pytest.raises(ChannelError, match="no synonym list named 'nosuch'"):
        registry.build("channels", {"synonyms": "nosuch"})
    with pytest.raises(ChannelError, match="semantic channel needs word vectors"):
        registry.build("channels", {"vectors": None})


def test_a_tesserae_synonym_list_by_name(tmp_path, monkeypatch):
    (tmp_path / "mine.csv").write_text("gladius,ensis,ferrum\n", encoding="utf-8")
    monkeypatch.setenv("SIMILIA_SYNONYMS_DIR", str(tmp_path))
    r = registry.build("channels", {"synonyms": "mine"}).fit(["a", "b"], ["ensis acutus", "mare altum"])
    top, scores, side = r.search_explained(["gladius"], 1)
    assert top.indices[0, 0] == 0
    assert ["gladius", "ensis"] in _channel(r.explain(0, 0, scores[0, 0], side), "synonym")["matches"]


def test_hybrid_union_with_maxsim_is_a_parameter_error():
    with pytest.raises(ParamError, match="candidates='union' needs a dense semantic score") as err:
        registry.build("hybrid", {"candidates": "union", "semantic": "maxsim"})
    assert err.value.key == "candidates"


def test_scores_do_not_depend_on_the_other_queries():
    """Without the context term a pair's score is its own; with it, it reads only the neighbouring lines, and a
    shard's rows equal the whole search's."""
    r = registry.build("channels", {"context_weight": 0}).fit(SRC_IDS, SRC)
    alone = r.search([QUERIES[2]], 3)
    together = r.search(QUERIES, 3)
    assert np.allclose(alone.scores[0], together.scores[2], equal_nan=True)
    assert list(alone.indices[0]) == list(together.indices[2])
    r = registry.build("channels").fit(SRC_IDS, SRC)
    whole = r.search(QUERIES, 3)
    for start, stop in ((0, 1), (1, 3), (3, 4)):
        part = r.search_range(QUERIES, 3, start, stop)
        assert np.array_equal(part.indices, whole.indices[start:stop])
        assert np.allclose(part.scores, whole.scores[start:stop], equal_nan=True)


def test_context_adds_the_neighbouring_line_pairs():
    """luc. 2.11-2.12 against aen. 7.314-7.315: the second line pair lifts the first (and is in its explanation)."""
    src_ids = ["verg. aen. 7.313", "verg. aen. 7.314", "verg. aen. 7.315"]
    src = ["at trahere atque moras tantis licet addere rebus,", "atque immota manet fatis Lavinia coniunx:",
           "at licet amborum populos exscindere regum."]
    q = ["Fatorum immoto divisit limite mundum:", "Amborum populos regum"]
    plain = registry.build("channels", {"context_weight": 0}).fit(src_ids, src)
    ctx = registry.build("channels").fit(src_ids, src)
    p0, c0 = plain.search(q, 3), ctx.search(q, 3)
    row = list(c0.indices[0]).index(1)
    assert c0.scores[0, row] > p0.scores[0, list(p0.indices[0]).index(1)]
    top, scores, side = ctx.search_explained(q, 3)
    ex = ctx.explain(0, 1, scores[0, list(top.indices[0]).index(1)], side)
    context = _channel(ex, "context")
    assert context["weight"] == 0.35 and context["score"] > 0 and context["matches"] == []
