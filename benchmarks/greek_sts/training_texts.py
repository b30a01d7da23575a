"""Training texts for the static embeddings: the verses available, read from the DBBE files.

``load_texts(path)`` detects the format: a gold TSV (unique reference and candidate verses), a verses CSV
with a ``verse`` column (``dbbe_verses_sample.csv``), or the token/POS/lemma gold
(``lingAnn_GS_medievalGreek.tsv``; tokens joined into verses/sentences at ``·`` ``.`` ``:`` ``;`` and the
other sentence-final punctuation tokens).
"""
from __future__ import annotations

import csv
from pathlib import Path

KNOWN_DBBE_FILES = ("STS_benchmark_medievalGreek.tsv", "dbbe_verses_sample.csv", "lingAnn_GS_medievalGreek.tsv")
_SENTENCE_END = {"·", "·", ".", ":", ";", ";", ":-", "·:·", ":∙", ":‒", ":~", "※", "⁘", "+"}


def load_texts(path: str | Path) -> list[str]:
    path = Path(path)
    with open(path, encoding="utf-8-sig", newline="") as fh:
        first = fh.readline()
    cols = [c.strip().lower() for c in first.rstrip("\r\n").split("\t")]
    if cols[:2] in (["verse1_id", "verse2_id"], ["reference_id", "candidate_id"]):
        from .gold_files import read_sts_gold

        pairs = read_sts_gold(path)
        return list(dict.fromkeys([p.reference_text for p in pairs] + [p.candidate_text for p in pairs]))
    if path.suffix.lower() == ".csv":
        with open(path, encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh)
            if "verse" not in (reader.fieldnames or []):
                raise ValueError(f"{path}: no 'verse' column")
            return [row["verse"] for row in reader if row["verse"].strip()]
    if len(cols) == 3:  # token, POS, lemma
        texts, cur = [], []
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                parts = line.rstrip("\n").split("\t")
                tok = parts[0].strip('"') if parts else ""
                if not tok:
                    continue
                pos = parts[1] if len(parts) > 1 else ""
                if pos.startswith("u") and tok in _SENTENCE_END:
                    if cur:
                        texts.append(" ".join(cur))
                    cur = []
                else:
                    cur.append(tok)
        if cur:
            texts.append(" ".join(cur))
        return texts
    raise ValueError(f"{path}: unknown format (expected a gold TSV, a verses CSV or a token/POS/lemma TSV)")


def training_corpus(paths) -> list[str]:
    """Texts of all ``paths`` in order, exact duplicates dropped."""
    out: dict[str, None] = {}
    for p in paths:
        for t in load_texts(p):
            out.setdefault(t, None)
    return list(out)


def default_corpus_paths(input_path: str | Path) -> list[Path]:
    """The input file plus the known DBBE files found in its folder (the verses available)."""
    input_path = Path(input_path)
    paths = [input_path]
    for name in KNOWN_DBBE_FILES:
        p = input_path.parent / name
        if p.exists() and p.resolve() != input_path.resolve():
            paths.append(p)
    return paths
