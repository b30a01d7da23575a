"""The corpus index and its search on real Tesserae texts: citations, malformed lines, parts and extension,
the channels' scores against the ``channels`` method fitted on the same segments, explanations, bad queries."""
import numpy as np
import pytest

from detection.channels import corpus_index, corpus_search
from detection.corpus import corpus_files
from detection.methods import registry


def test_works_keep_their_citations_and_genre(built):
    folder, _settings, report, manifest = built
    works = {w["key"]: w for w in manifest["works"]}
    assert set(works) == {"vergil.eclogues", "horace.ars_poetica", "cicero.pro_archia", "bad.carmen"}
    assert works["vergil.eclogues"]["genre"] == "verse" and works["vergil.eclogues"]["cite"] == "verg. ecl."
    assert works["cicero.pro_archia"]["genre"] == "prose"  # sections split into sentences
    assert works["cicero.pro_archia"]["n"] > 32
    index = corpus_index.CorpusIndex(folder)
    first = works["vergil.eclogues"]["start"]
    assert index.citation(first) == "verg. ecl. 1.1"
    assert index.text(first).startswith("Tityre, tu patulae recubans")
    assert index.citation(works["cicero.pro_archia"]["start"]) == "cic. arch. 1.1"
    assert manifest["n_segments"] == sum(w["n"] for w in manifest["works"])
    assert len(manifest["parts"]) >= 2  # part_size 1000: the works spread over parts


def test_malformed_lines_are_reported_by_file_and_line_and_the_build_goes_on(built):
    _folder, _settings, report, manifest = built
    assert report.skipped == {"bad tess line": 1, "empty text": 1}
    assert any("bad.carmen.tess, line 2" in m for m in report.messages)
    assert any("bad.carmen.tess, line 3" in m for m in report.messages)
    bad = next(w for w in manifest["works"] if w["key"] == "bad.carmen")
    assert bad["n"] == 2


def test_an_archive_reads_like_its_folder(small_corpus_dir, tmp_path):
    import tarfile

    arc = tmp_path / "c.tar.gz"
    with tarfile.open(arc, "w:gz") as tf:
        for f in sorted(small_corpus_dir.iterdir()):
            tf.add(f, arcname=f"deep/../{f.name}")
    a = [(w.key, len(w.texts)) for w in corpus_files.read_corpus(arc, report=corpus_files.new_report())]
    b = [(w.key, len(w.texts)) for w in corpus_files.read_corpus(small_corpus_dir, report=corpus_files.new_report())]
    assert a == b and len(a) == 4
    with pytest.raises(corpus_files.InputError, match="not a folder or an archive"):
        list(corpus_files.read_corpus(tmp_path / "nothing.txt", report=corpus_files.new_report()))


def test_scores_and_explanations_equal_the_channels_method_fitted_on_the_same_segments(built, small_corpus_dir,
                                                                                     tmp_path):
    """An index built with the method's sound statistic (``METHOD_SOUND_CAP``: trigrams in at most a fifth of the
    segments; the default corpus index keeps 1 %, docs/corpus_search.md) gives every sparse channel's score of the
    top hits as the fitted method does (same rarities, same features, the sound idf over the same segments), and
    the same explanation: one code (`detection.channels.fusion`). The semantic channel's encoder is fitted on the
    index's first part, so it is not compared here."""
    from dataclasses import replace

    from detection.channels.channel_features import METHOD_SOUND_CAP

    _folder, settings, _report, _manifest = built
    settings = replace(settings, sound_cap=METHOD_SOUND_CAP)
    works = list(corpus_files.read_corpus(small_corpus_dir, report=corpus_files.new_report()))
    manifest = corpus_index.build_index(tmp_path, "fifth", works, settings, part_size=1000)
    assert manifest["sound_cap"] == METHOD_SOUND_CAP
    index = corpus_index.CorpusIndex(tmp_path / "fifth", expected_digest=settings.digest)
    searcher = corpus_search.CorpusSearcher(index, settings)
    texts = [index.text(i) for i in range(index.n)]
    method = registry.build_config(registry.configure("channels", {"semantic": False, "context_weight": 0}))
    method.fit([str(i) for i in range(index.n)], texts)
    compared = explained = 0
    for query in ("Tityre, tu patulae recubans sub tegmine fagi", "scribendi recte sapere est et principium et fons",
                  "formosam resonare doces Amaryllida silvas", "quod si non hic tantus fructus ostenderetur"):
        hits, _ = searcher.search(query, 10, explain=10)
        top, per, side = method.search_explained([query], 10)
        chans = side[2]
        ours = {h.index: h for h in hits}
        for j, s in enumerate(top.indices[0].tolist()):
            if s not in ours:
                continue
            for c, ch in enumerate(chans):
                assert ours[s].channels[ch] == pytest.approx(float(per[0, j, c]), rel=1e-4, abs=1e-5), (s, ch)
            compared += 1
            theirs = method.explain(0, s, per[0, j], side)
            mine = {c["name"]: c for c in ours[s].explanation["channels"] if c["name"] != "semantic"}
            assert set(mine) == {c["name"] for c in theirs["channels"]}, (query, s)
            for c in theirs["channels"]:
                assert mine[c["name"]]["matches"] == c["matches"], (query, s, c["name"])
                assert mine[c["name"]]["score"] == pytest.approx(c["score"], rel=1e-4, abs=1e-5)
            assert ours[s].explanation["rarity"] == theirs["rarity"]
            explained += 1
    assert compared >= 20 and explained == compared
    assert searcher.search("Tityre, tu patulae recubans sub tegmine fagi", 1)[0][0].citation == "verg. ecl. 1.1"


def test_explanations_name_the_matched_words(built):
    folder, settings, _r, _m = built
    searcher = corpus_search.CorpusSearcher(corpus_index.CorpusIndex(folder), settings)
    hits, info = searcher.search("formosam resonare doces Amaryllida silvas", 5)
    top = hits[0]
    assert top.citation == "verg. ecl. 1.5"
    lemma = next(c for c in top.explanation["channels"] if c["name"] == "lemma")
    assert ["siluas", "siluas"] in lemma["matches"] and lemma["contribution"] == pytest.approx(
        lemma["score"] * lemma["weight"], rel=1e-5)
    assert "siluas" in top.explanation["segment_words"] and "siluas" in top.explanation["query_words"]
    assert info["n_segments"] == searcher.index.n


def test_filters_keep_only_the_chosen_works_and_genre(built):
    folder, settings, _r, _m = built
    searcher = corpus_search.CorpusSearcher(corpus_index.CorpusIndex(folder), settings)
    q = "Tityre, tu patulae recubans sub tegmine fagi"
    hits, _ = searcher.search(q, 10, filters=corpus_search.Filters(exclude_works=["vergil.eclogues"]))
    assert hits and all(h.work["key"] != "vergil.eclogues" for h in hits)
    hits, _ = searcher.search(q, 10, filters=corpus_search.Filters(genre="prose"))
    assert hits and all(h.work["genre"] == "prose" for h in hits)
    hits, _ = searcher.search(q, 5, filters=corpus_search.Filters(authors=["horace"]))
    assert hits and {h.work["author"] for h in hits} == {"horace"}


@pytest.mark.parametrize("text, message", [
    ("", "the query is empty"),
    ("   ", "the query is empty"),
    ("arma " * 100, "the limit is 400"),
    ("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος", "not Latin"),
    ("12345 !!!", "not Latin"),
])
def test_bad_queries_are_refused_with_a_reason(text, message):
    with pytest.raises(corpus_search.QueryError, match=message):
        corpus_search.check_query(text)


def test_extending_adds_works_without_reanalysing_and_reweighs_sound(built, small_corpus_dir, tmp_path):
    import shutil

    _folder, settings, _r, _m = built
    report = corpus_files.new_report()
    works = list(corpus_files.read_corpus(small_corpus_dir, report=report))
    first = [w for w in works if w.key != "horace.ars_poetica"]
    corpus_index.build_index(tmp_path, "ext", first, settings, part_size=1000)
    before = (tmp_path / "ext" / "p000").stat().st_mtime_ns if (tmp_path / "ext" / "p000").exists() else None
    m = corpus_index.build_index(tmp_path, "ext", [w for w in works if w.key == "horace.ars_poetica"], settings,
                                 extend=True)
    assert m["added_last_build"] == 476 and m["works"][-1]["key"] == "horace.ars_poetica"
    assert before is None or before == (tmp_path / "ext" / "p000").stat().st_mtime_ns
    with pytest.raises(corpus_index.CorpusIndexError, match="already"):
        corpus_index.build_index(tmp_path, "ext", [works[0]], settings, extend=True)
    # the same works built at once give the same scores (sound idf recomputed over every part)
    whole = [w for w in works if w.key != "horace.ars_poetica"] + [w for w in works if w.key == "horace.ars_poetica"]
    corpus_index.build_index(tmp_path, "once", whole, settings, part_size=100_000)
    a = corpus_search.CorpusSearcher(corpus_index.CorpusIndex(tmp_path / "ext"), settings)
    b = corpus_search.CorpusSearcher(corpus_index.CorpusIndex(tmp_path / "once"), settings)
    q = "scribendi recte sapere est et principium et fons"
    ha, _ = a.search(q, 5)
    hb, _ = b.search(q, 5)
    assert ha[0].citation == hb[0].citation == "hor. a.p. 309"
    by_index = {h.index: h for h in hb}
    shared = [h for h in ha if h.index in by_index]
    assert len(shared) >= 3  # (the semantic encoder is fitted on each index's first part: the tails may differ)
    for x in shared:
        for ch in ("lemma", "rare", "sound", "form", "quote", "order", "synonym", "edit"):
            assert x.channels[ch] == pytest.approx(by_index[x.index].channels[ch], rel=1e-4, abs=1e-6), ch
    shutil.rmtree(tmp_path)


def test_an_index_of_another_configuration_is_stale(built):
    folder, _settings, _r, _m = built
    other = corpus_index.channel_settings({"rare_min": 6.0})
    with pytest.raises(corpus_index.StaleIndex, match="rebuild"):
        corpus_index.CorpusIndex(folder, expected_digest=other.digest)


def test_arrays_are_plain_npy_without_pickle(built):
    folder, *_ = built
    files = list(folder.rglob("*.npy"))
    assert files
    for f in files:
        np.load(f, allow_pickle=False, mmap_mode="r")


def test_a_failed_build_leaves_nothing_half_built(built, small_corpus_dir, tmp_path):
    _folder, settings, _r, _m = built
    works = list(corpus_files.read_corpus(small_corpus_dir, report=corpus_files.new_report()))
    with pytest.raises(corpus_index.CorpusIndexError, match="already"):
        corpus_index.build_index(tmp_path, "twice", works + works[:1], settings, part_size=500)
    assert not any(tmp_path.iterdir())  # the fresh build's folder removed
    corpus_index.build_index(tmp_path, "ext", works[:1], settings)
    before = sorted(p.name for p in (tmp_path / "ext").iterdir())
    with pytest.raises(corpus_index.CorpusIndexError, match="already"):
        corpus_index.build_index(tmp_path, "ext", works[1:] + works[:1], settings, extend=True, part_size=500)
    assert sorted(p.name for p in (tmp_path / "ext").iterdir()) == before  # the extension's parts removed
    assert corpus_index.CorpusIndex(tmp_path / "ext").n == len(works[0].texts)
