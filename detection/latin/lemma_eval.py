"""Measure lemma accuracy against CoNLL-U gold (UD Latin treebanks; used for measurement only).

Comparison is on normalised strings (lower case, u/i, j/i, no diacritics, no digits/brackets: UD writes
homographs as ``edo#1`` and variants as ``alioqui(n)``). Punctuation and tokens whose gold lemma
normalises to nothing are skipped. Enclitics are separate tokens in both treebanks.

    python -m detection.latin.lemma_eval FILE.conllu [...]
"""
from __future__ import annotations

import collections
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError
from .normalize import normalize_text


def _norm(s: str) -> str:
    s = s.split("#")[0].replace("(", "").replace(")", "")
    return normalize_text(s).replace(" ", "")


def read_conllu(path) -> list[tuple[str, str, str]]:
    """(form, lemma, upos) for every word line of a CoNLL-U file."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 4:
                raise InputError("expected 10 tab-separated CoNLL-U columns", path=path, line=lineno)
            if "-" in cols[0] or "." in cols[0]:
                continue
            out.append((cols[1], cols[2], cols[3]))
    return out


@dataclass
class LemmaScore:
    name: str
    total: int = 0
    correct: int = 0
    errors: collections.Counter = field(default_factory=collections.Counter)
    by_pos: dict = field(default_factory=lambda: collections.defaultdict(lambda: [0, 0]))

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0


def evaluate(rows, lemmatizer, name: str) -> LemmaScore:
    score = LemmaScore(name)
    forms = [_norm(f) for f, _, _ in rows]
    preds = lemmatizer.lemmatize(forms)
    for (form, gold, upos), nform, pred in zip(rows, forms, preds):
        g = _norm(gold)
        if upos in ("PUNCT", "X", "SYM", "NUM") or not g or not nform:
            continue
        score.total += 1
        ok = _norm(pred) == g
        score.correct += ok
        score.by_pos[upos][0] += ok
        score.by_pos[upos][1] += 1
        if not ok:
            score.errors[(nform, g, _norm(pred))] += 1
    return score


def main(argv=None) -> int:
    from .lemmatize import get_lemmatizer

    paths = argv if argv is not None else sys.argv[1:]
    for p in paths:
        rows = read_conllu(p)
        for name in ("simplemma", "similia"):
            s = evaluate(rows, get_lemmatizer(name), name)
            print(f"{Path(p).name}\t{name}\t{s.correct}/{s.total}\t{s.accuracy:.4f}")
            if name == "similia":
                pos = sorted(s.by_pos.items(), key=lambda kv: -kv[1][1])[:8]
                print("  by UPOS: " + ", ".join(f"{k} {c / t:.3f} ({t})" for k, (c, t) in pos))
                print("  top errors (form gold->ours): " + "; ".join(
                    f"{f} {g}->{o} x{n}" for (f, g, o), n in s.errors.most_common(15)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
