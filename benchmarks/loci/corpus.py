"""Reading corpus files written by ``detection.latin.corpus.build_corpus`` (``query.csv``, ``source.csv`` with
``seg_id,text,author,work``)."""
from __future__ import annotations

from pathlib import Path

from .data import Segment, load_segments_csv


def read_corpus_dir(directory) -> tuple[list[Segment], list[Segment]]:
    """(query segments, source segments) from ``directory/query.csv`` and ``directory/source.csv``."""
    d = Path(directory)
    return load_segments_csv(d / "query.csv"), load_segments_csv(d / "source.csv")


def build_corpus(texts_dir, out_dir) -> Path:
    """Build the corpus files with the engine (``detection.latin.corpus.build_corpus``); returns ``out_dir``."""
    from detection.latin.corpus import build_corpus as _build
    _build(texts_dir, out_dir)
    return Path(out_dir)

