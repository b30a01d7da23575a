"""Reading corpus files written by ``detection.engine.corpus.build_corpus`` (``query.csv``, ``source.csv`` with
``seg_id,text,author,work``)."""
from __future__ import annotations

from pathlib import Path

from .data import Segment, load_segments_csv


def read_corpus_dir(directory) -> tuple[list[Segment], list[Segment]]:
    """(query segments, source segments) from ``directory/query.csv`` and ``directory/source.csv``."""
    d = Path(directory)
    return load_segments_csv(d / "query.csv"), load_segments_csv(d / "source.csv")


def build_corpus(texts_dir, out_dir) -> Path:
    """Build the corpus files with the engine (``detection.engine.corpus.build_corpus``); returns ``out_dir``."""
    from detection.engine.corpus import build_corpus as _build
    _build(texts_dir, out_dir)
    return Path(out_dir)


QUERY_AUTHORS = {"jerome": "hier", "lactantius": "lact"}
SOURCE_AUTHORS = {"cicero": "cic", "ovid": "ov", "vergil": "verg", "martial": "mart", "lucan": "lucan",
                  "statius": "stat", "horace": "hor", "propertius": "prop", "lucretius": "lucr", "catullus": "catull",
                  "tibullus": "tib"}
PROSE = {"cicero", "jerome", "lactantius"}


def build_corpus_from_tess(tess_dir, out_dir=None) -> tuple[list, list]:
    """Stand-in for the engine's ``build_corpus`` while it is not there: Tesserae ``.tess`` files of the Loci
    Similes authors, read and sentence-split with the engine's ``read_tess``/``segment_units``; Jerome and
    Lactantius on the query side, the eleven classical authors on the source side. Writes ``query.csv`` and
    ``source.csv`` (``seg_id,text,author,work``) to ``out_dir`` when given.

    Returns:
        (query segments, source segments) as :class:`benchmarks.loci.data.Segment`.
    """
    import csv
    from detection.engine.readers import ReadReport, read_tess, tess_prefix
    from detection.engine.segment import segment_units

    from .data import Segment as S
    q, s = [], []
    for path in sorted(Path(tess_dir).glob("*.tess")):
        author = path.name.split(".")[0]
        if author not in QUERY_AUTHORS and author not in SOURCE_AUTHORS:
            continue
        prefix = tess_prefix(path)
        segs = segment_units(read_tess(path, report=ReadReport()), prefix, author=author, work=prefix, verse=author not in PROSE)
        rows = [S(x.seg_id, x.text, author, prefix) for x in segs]
        (q if author in QUERY_AUTHORS else s).extend(rows)
    if out_dir:
        d = Path(out_dir)
        d.mkdir(parents=True, exist_ok=True)
        for name, rows in (("query.csv", q), ("source.csv", s)):
            with open(d / name, "w", newline="", encoding="utf-8") as fh:
                w = csv.writer(fh)
                w.writerow(["seg_id", "text", "author", "work"])
                w.writerows([[x.seg_id, x.text, x.author, x.work] for x in rows])
    return q, s
