"""The content-addressed cache of fitted pool indexes (``detection.methods.infrastructure.index_cache``): the key follows the
content and the parameters, a cached load ranks bit-identically to a fresh fit, a damaged entry is refitted and
never used, and the least recently used entry is evicted first."""
import fcntl
import json
import multiprocessing
import os
import time

import numpy as np
import pytest

from detection.methods import get_retriever
from detection.methods.infrastructure import index_files
from detection.methods.infrastructure.index_cache import IndexCache, cache_key
from tests.detection.methods.test_index_files import texts  # noqa: F401  (the 545 pairs' real texts)


def test_the_key_follows_the_content_and_the_parameters():
    ids, src = ["a", "b", "c"], ["arma uirumque cano", "Troiae qui primus ab oris", "Italiam fato profugus"]
    key = cache_key("bm25-lemma", {}, ids, src)
    assert len(key) == 64 and key == cache_key("bm25-lemma", {}, list(ids), list(src))  # same content: same key
    assert key == cache_key("bm25-lemma", {"k1": 1.5, "b": 0.75}, ids, src)  # validated: defaults filled in
    assert key != cache_key("bm25-lemma", {"k1": 1.2}, ids, src)  # a parameter
    assert key != cache_key("bm25-surface", {}, ids, src)  # the method
    assert key != cache_key("bm25-lemma", {}, ids, src[:2] + ["Italiam fato profugus."])  # one segment's text
    assert key != cache_key("bm25-lemma", {}, ["a", "c", "b"], src)  # the ids (order)
    # the strings are hashed with their lengths: moving a boundary between two texts changes the key
    assert cache_key("tesserae", {}, ["x", "y"], ["ab", "c"]) != cache_key("tesserae", {}, ["x", "y"], ["a", "bc"])


@pytest.mark.parametrize("name", ["bm25-lemma", "tfidf-lemma-12", "tesserae"])
def test_a_cached_load_ranks_bit_identically_to_a_fresh_fit(name, texts, tmp_path):  # noqa: F811
    ids, src, queries = texts
    cache = IndexCache(tmp_path / "cache", 1 << 30)
    key = cache_key(name, {}, ids, src)
    first = get_retriever(name, cache_dir=tmp_path / "lemmas")
    assert cache.fit_or_load(first, key, lambda: first.fit(ids, src)) == "built"
    # the entry's folder is named by the key only (beside it: the lock folder, named with a dot like temporaries)
    assert [p.name for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")] == [key]
    fresh = get_retriever(name, cache_dir=tmp_path / "lemmas").fit(ids, src)
    loaded = get_retriever(name, cache_dir=tmp_path / "lemmas")
    assert cache.fit_or_load(loaded, key, lambda: pytest.fail("a cached index is not fitted again")) == "cache"
    a, b = fresh.search(queries, 20), loaded.search(queries, 20)
    assert a.indices.tobytes() == b.indices.tobytes() and a.scores.tobytes() == b.scores.tobytes()
    r1, r2 = fresh.search_range(queries, 20, 10, 30), loaded.search_range(queries, 20, 10, 30)
    assert r1.indices.tobytes() == r2.indices.tobytes() and r1.scores.tobytes() == r2.scores.tobytes()
    assert (a.indices >= 0).sum() > len(queries)


def test_a_truncated_or_partial_entry_is_refitted_never_used(texts, tmp_path):  # noqa: F811
    ids, src, queries = texts
    cache = IndexCache(tmp_path / "cache", 1 << 30)
    key = cache_key("bm25-lemma", {}, ids, src)
    r = get_retriever("bm25-lemma").fit(ids, src)
    assert cache.store(key, r)
    biggest = max((cache.path(key)).glob("*.npy"), key=lambda p: p.stat().st_size)
    with open(biggest, "r+b") as f:
        f.truncate(biggest.stat().st_size // 2)
    victim = get_retriever("bm25-lemma")
    assert not cache.load(key, victim) and victim.W is None  # not used ...
    assert not cache.path(key).exists()  # ... and removed
    fits = []
    again = get_retriever("bm25-lemma")
    assert cache.fit_or_load(again, key, lambda: fits.append(again.fit(ids, src))) == "built" and len(fits) == 1
    assert cache.fit_or_load(get_retriever("bm25-lemma"), key, lambda: pytest.fail("refit")) == "cache"
    # a folder without its manifest (a writer that died before the rename leaves only a .tmp- folder) is a miss
    (cache.path(key) / index_files.MANIFEST).unlink()
    assert not cache.load(key, get_retriever("bm25-lemma"))
    # a manifest that does not match its arrays (shape) is refused too
    cache.evict()
    assert cache.store("f" * 64, get_retriever("bm25-lemma").fit(ids, src))
    manifest = cache.path("f" * 64) / index_files.MANIFEST
    manifest.write_text(manifest.read_text().replace('"shape": [', '"shape": [7, ', 1))
    assert not cache.load("f" * 64, get_retriever("bm25-lemma")) and not cache.path("f" * 64).exists()
    # an entry that lacks an array the retriever reads (its manifest consistent) is a miss as well
    assert cache.store("e" * 64, get_retriever("bm25-lemma").fit(ids, src))
    manifest = cache.path("e" * 64) / index_files.MANIFEST
    listed = json.loads(manifest.read_text())
    del listed["arrays"]["idf"]
    manifest.write_text(json.dumps(listed))
    assert not cache.load("e" * 64, get_retriever("bm25-lemma")) and not cache.path("e" * 64).exists()


def test_eviction_removes_the_least_recently_used_entry(tmp_path):
    docs = [f"arma uirumque cano {i} Troiae qui primus ab oris" for i in range(200)]
    ids = [str(i) for i in range(len(docs))]
    fitted = get_retriever("bm25-surface").fit(ids, docs)
    probe = IndexCache(tmp_path / "probe", 1 << 30)
    probe.store("0" * 64, fitted)
    size = probe.size_of("0" * 64)
    cache = IndexCache(tmp_path / "cache", int(2.5 * size))  # room for two entries
    a, b, c = "a" * 64, "b" * 64, "c" * 64
    assert cache.store(a, fitted) and cache.store(b, fitted)
    assert cache.load(a, get_retriever("bm25-surface"))  # a is now used more recently than b
    assert cache.store(c, fitted)
    assert {k for _, _, k in cache.entries()} == {a, c}  # b, the least recently used, went
    assert sum(s for _, s, _ in cache.entries()) <= cache.max_bytes
    tiny = IndexCache(tmp_path / "tiny", size // 2)  # an index larger than the whole cache is not stored
    assert not tiny.store(a, fitted) and tiny.entries() == []
    assert not IndexCache(tmp_path / "off", 0).store(a, fitted)  # 0: no cache


def test_keys_are_hex_only_and_a_second_writer_keeps_the_first_entry(tmp_path):
    cache = IndexCache(tmp_path / "cache", 1 << 30)
    for bad in ["../etc", "A" * 64, "a" * 63, ""]:
        with pytest.raises(ValueError):
            cache.path(bad)
    r = get_retriever("bm25-surface").fit(["1", "2"], ["arma uirumque", "cano Troiae"])
    assert cache.store("d" * 64, r)
    before = os.stat(cache.path("d" * 64) / "w_data.npy").st_ino
    written = index_files.save_index(r, cache.path("d" * 64))  # a racing writer: its copy is dropped
    assert written and os.stat(cache.path("d" * 64) / "w_data.npy").st_ino == before
    assert not list((tmp_path / "cache").glob(".tmp-*"))
    assert np.array_equal(index_files.load_arrays(cache.path("d" * 64))["w_shape"], [len(r.vocab), 2])


@pytest.mark.parametrize("damage", ["garbage", "empty", "no manifest"])
def test_an_entry_whose_manifest_is_damaged_is_removed_and_replaced_by_the_next_fit(damage, tmp_path):
    # a crash between writing the arrays and the manifest reaching the disk, or a removal that was interrupted
    docs, ids = ["arma uirumque cano", "Troiae qui primus ab oris"], ["1", "2"]
    cache = IndexCache(tmp_path / "cache", 1 << 30)
    key = cache_key("bm25-surface", {}, ids, docs)
    assert cache.store(key, get_retriever("bm25-surface").fit(ids, docs))
    manifest = cache.path(key) / index_files.MANIFEST
    if damage == "no manifest":
        manifest.unlink()
        assert key in {k for _, _, k in cache.entries()}  # still counted against max_bytes ...
        assert cache.entries()[0][0] == 0  # ... as the least recently used
    else:
        manifest.write_text("{garbage" if damage == "garbage" else "")
    fits = []
    r = get_retriever("bm25-surface")
    assert cache.fit_or_load(r, key, lambda: fits.append(r.fit(ids, docs))) == "built" and len(fits) == 1
    assert index_files.read_manifest(cache.path(key)) is not None  # the fresh fit took the key's place
    assert cache.fit_or_load(get_retriever("bm25-surface"), key, lambda: pytest.fail("refit")) == "cache"


def test_max_bytes_zero_turns_loading_off_too(tmp_path):
    docs, ids = ["arma uirumque cano", "Troiae qui primus ab oris"], ["1", "2"]
    key = cache_key("bm25-surface", {}, ids, docs)
    assert IndexCache(tmp_path / "cache", 1 << 30).store(key, get_retriever("bm25-surface").fit(ids, docs))
    off = IndexCache(tmp_path / "cache", 0)
    assert not off.enabled and not off.load(key, get_retriever("bm25-surface"))
    fits = []
    r = get_retriever("bm25-surface")
    assert off.fit_or_load(r, key, lambda: fits.append(r.fit(ids, docs))) == "built" and len(fits) == 1


def test_the_code_digest_follows_every_source_file(tmp_path):
    from detection.methods.infrastructure.index_cache import source_digest

    (tmp_path / "latin").mkdir()
    (tmp_path / "bm25.py").write_text("K1 = 1.5\n")
    (tmp_path / "latin" / "tokenize.py").write_text("SPLIT = ' '\n")
    first = source_digest(tmp_path)
    assert source_digest(tmp_path) == first
    (tmp_path / "latin" / "tokenize.py").write_text("SPLIT = '  '\n")  # a change deep in the analysers
    second = source_digest(tmp_path)
    assert second != first
    (tmp_path / "latin" / "tokenize.py").rename(tmp_path / "latin" / "tokens.py")  # a renamed module
    assert source_digest(tmp_path) not in (first, second)


DOCS = [f"arma uirumque cano {i} Troiae qui primus ab oris" for i in range(50)]
IDS = [str(i) for i in range(len(DOCS))]


def _fit_slowly(root: str, key: str, barrier, fits_log: str, out) -> None:
    """A worker process on a cold cache: fit (slowly, so that two overlap), logging each fit it really does."""
    cache = IndexCache(root, 1 << 30)
    r = get_retriever("bm25-surface")

    def fit():
        with open(fits_log, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(0.5)
        r.fit(IDS, DOCS)

    barrier.wait(timeout=30)
    how = cache.fit_or_load(r, key, fit)
    hits = r.search(["arma uirumque cano 7"], 3)
    out.put((how, hits.indices.tolist(), hits.scores.tolist()))


def test_two_processes_on_a_cold_cache_fit_once_and_the_second_loads_it(tmp_path):
    """Two jobs started together used to fit the same index twice; the second now waits on the key's lock and
    loads what the first stored, with the same rankings."""
    ctx = multiprocessing.get_context("spawn")
    key = cache_key("bm25-surface", {}, IDS, DOCS)
    barrier, out, log = ctx.Barrier(2), ctx.Queue(), tmp_path / "fits.log"
    procs = [ctx.Process(target=_fit_slowly, args=(str(tmp_path / "cache"), key, barrier, str(log), out))
             for _ in range(2)]
    for p in procs:
        p.start()
    results = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    assert sorted(how for how, _, _ in results) == ["built", "cache"]
    assert len(log.read_text().split()) == 1, "the index was fitted more than once"
    assert results[0][1:] == results[1][1:]


def _crash_while_fitting(root: str, key: str) -> None:
    cache = IndexCache(root, 1 << 30)
    cache.fit_or_load(get_retriever("bm25-surface"), key, lambda: os._exit(3))  # a worker killed mid-fit


def test_a_fitter_that_dies_leaves_no_lock_behind_and_old_locks_are_swept(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    cache = IndexCache(tmp_path / "cache", 1 << 30)
    key = cache_key("bm25-surface", {}, IDS, DOCS)
    dead = ctx.Process(target=_crash_while_fitting, args=(str(cache.root), key))
    dead.start()
    dead.join(timeout=60)
    assert dead.exitcode == 3 and (cache.root / ".locks" / key).exists() and not cache.path(key).exists()
    fd = os.open(cache.root / ".locks" / key, os.O_RDWR)
    try:  # the kernel dropped the dead process's lock: it can be taken at once, without waiting
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)
    r = get_retriever("bm25-surface")
    assert cache.fit_or_load(r, key, lambda: r.fit(IDS, DOCS)) == "built" and cache.path(key).is_dir()

    orphan = cache.root / ".locks" / ("f" * 64)  # a key that never got an entry (too large to store)
    orphan.touch()
    hour_ago = time.time() - 2 * 3600
    for lock in (orphan, cache.root / ".locks" / key):
        os.utime(lock, (hour_ago, hour_ago))
    cache.evict()
    assert not orphan.exists() and (cache.root / ".locks" / key).exists()  # the stored key keeps its lock file
