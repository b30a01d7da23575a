"""A fitted retriever saved as arrays and loaded in a fresh retriever ranks exactly as the one that was fitted
(``detection.methods.infrastructure.index_files``), memory-mapped and without pickle."""
import csv
import json
from pathlib import Path

import numpy as np
import pytest

from detection.methods import get_retriever
from detection.methods.infrastructure import index_files

PAIRS = Path(__file__).resolve().parents[3] / "data" / "locisimiles" / "pairs_545_with_text.csv"


@pytest.fixture(scope="module")
def texts():
    """The 545 pairs' real query and source texts (distinct sources, in file order)."""
    with open(PAIRS, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    sources = dict((r["position_corpus"], r["text_corpus"]) for r in rows)
    queries = list(dict.fromkeys(r["text_query"] for r in rows))
    return list(sources), list(sources.values()), queries


@pytest.mark.parametrize("name", ["bm25-lemma", "tfidf-lemma-12", "tesserae"])
def test_loaded_index_ranks_as_the_fitted_one(name, texts, tmp_path):
    ids, src, queries = texts
    fitted = get_retriever(name, cache_dir=tmp_path / "lemmas").fit(ids, src)
    assert index_files.save_index(fitted, tmp_path / "index", meta={"key": "run-1"})
    assert index_files.read_manifest(tmp_path / "index")["meta"] == {"key": "run-1"}
    assert not list(tmp_path.glob(".tmp-*"))  # written beside it, then renamed
    loaded = get_retriever(name, cache_dir=tmp_path / "lemmas")
    assert index_files.load_index(loaded, tmp_path / "index")
    assert loaded.source_ids == fitted.source_ids
    a, b = fitted.search(queries, 20), loaded.search(queries, 20)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.scores, b.scores)
    r1, r2 = fitted.search_range(queries, 20, 10, 30), loaded.search_range(queries, 20, 10, 30)
    np.testing.assert_array_equal(r1.indices, r2.indices)
    np.testing.assert_array_equal(r1.scores, r2.scores)
    assert (a.indices >= 0).sum() > len(queries)  # the queries found sources


def test_arrays_are_memory_mapped_and_never_pickled(texts, tmp_path):
    ids, src, _ = texts
    fitted = get_retriever("bm25-lemma", cache_dir=tmp_path / "lemmas").fit(ids, src)
    index_files.save_index(fitted, tmp_path / "index")
    arrays = index_files.load_arrays(tmp_path / "index")
    assert all(isinstance(a, np.memmap) for a in arrays.values())
    loaded = get_retriever("bm25-lemma")
    loaded.use_index_arrays(arrays)
    # the weight matrix is a view of the mapped file (read as pages are needed), not a copy
    assert np.shares_memory(loaded.W.data, arrays["w_data"]) and np.shares_memory(loaded.W.indices, arrays["w_indices"])
    manifest = json.loads((tmp_path / "index" / index_files.MANIFEST).read_text())
    assert set(manifest["arrays"]) == {"terms", "source_ids", "w_data", "w_indices", "w_indptr", "w_shape", "idf"}


def test_what_cannot_be_saved_is_refused(tmp_path):
    class NoArrays:
        pass

    class Objects:
        def index_arrays(self):
            return {"terms": np.array([("a", "b")], dtype=object)}

        def use_index_arrays(self, arrays):
            raise AssertionError("never loaded")

    assert not index_files.save_index(NoArrays(), tmp_path / "a") and not (tmp_path / "a").exists()
    with pytest.raises(TypeError, match="Python objects"):
        index_files.save_index(Objects(), tmp_path / "b")
    assert not index_files.save_index(get_retriever("bm25-lemma"), tmp_path / "c")  # not fitted: nothing
    assert index_files.read_manifest(tmp_path / "missing") is None
    assert not index_files.load_index(get_retriever("bm25-lemma"), tmp_path / "missing")
