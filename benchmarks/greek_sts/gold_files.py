"""Reading and writing graded similarity gold sets (reference → candidate → score).

The released file (Swaelens et al., ``STS_benchmark_medievalGreek.tsv``) is tab-separated with a header
``verse1_id verse2_id verse1 verse2 normalized_counts``; the same shape with the header
``reference_id candidate_id reference_text candidate_text score`` is accepted too (what
:func:`write_sts_gold` writes, so an annotation batch exported this way becomes a benchmark).
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import asdict, dataclass
from pathlib import Path


class GoldFormatError(ValueError):
    """Bad gold file; the message names the file and line."""


@dataclass(frozen=True)
class GoldPair:
    reference_id: str
    candidate_id: str
    reference_text: str
    candidate_text: str
    score: float

    def as_dict(self) -> dict:
        return asdict(self)


_HEADERS = {
    ("verse1_id", "verse2_id", "verse1", "verse2", "normalized_counts"),
    ("reference_id", "candidate_id", "reference_text", "candidate_text", "score"),
}


def parse_score(raw) -> float:
    """A graded similarity score: a finite number in [0, 1]; ValueError naming the value otherwise (the file
    reader and the import of rows both check scores with it)."""
    try:
        score = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"score {raw!r} is not a number") from None
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        raise ValueError(f"score {raw!r} is outside [0, 1]")
    return score


def _unquote(cell: str) -> str:
    """A cell the file wraps in CSV double quotes (a verse with a comma) without them, as the annotation
    importer's csv reader reads it: `"κατὰ μωσῆν …,"` → `κατὰ μωσῆν …,`."""
    if len(cell) >= 2 and cell[0] == cell[-1] == '"':
        return cell[1:-1].replace('""', '"')
    return cell


def read_sts_gold(path: str | Path, *, text: str | None = None) -> list[GoldPair]:
    """Read a gold TSV (or its contents given as ``text``, ``path`` then only names it in errors).

    Raises :class:`GoldFormatError` naming ``file:line`` for a wrong header, a wrong number of columns,
    an empty id, a score that is not a finite number in [0, 1], or a duplicated (reference, candidate) pair.
    """
    name = str(path)
    if text is None:
        try:
            with open(path, encoding="utf-8-sig", newline="") as fh:
                text = fh.read()
        except UnicodeDecodeError as exc:
            raise GoldFormatError(f"{name}: not UTF-8 text ({exc})") from exc
    lines = text.splitlines()
    if not lines:
        raise GoldFormatError(f"{name}:1: empty file (expected a header {sorted(_HEADERS)[0]})")
    header = tuple(c.strip().lower() for c in lines[0].lstrip("\ufeff").split("\t"))
    if header not in _HEADERS:
        raise GoldFormatError(
            f"{name}:1: unexpected header {list(header)}; expected tab-separated "
            f"'verse1_id verse2_id verse1 verse2 normalized_counts' or "
            f"'reference_id candidate_id reference_text candidate_text score'"
        )
    pairs: list[GoldPair] = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cols = next(csv.reader(io.StringIO(line), delimiter="\t", quoting=csv.QUOTE_NONE))
        if len(cols) != 5:
            raise GoldFormatError(f"{name}:{lineno}: expected 5 tab-separated columns, found {len(cols)}")
        ref_id, cand_id, ref_text, cand_text, raw = (_unquote(c.strip()) for c in cols)
        if not ref_id or not cand_id:
            raise GoldFormatError(f"{name}:{lineno}: empty reference or candidate id")
        try:
            score = parse_score(raw)
        except ValueError as exc:
            raise GoldFormatError(f"{name}:{lineno}: {exc}") from None
        key = (ref_id, cand_id)
        if key in seen:
            raise GoldFormatError(f"{name}:{lineno}: pair {ref_id!r} → {cand_id!r} repeats line {seen[key]}")
        seen[key] = lineno
        pairs.append(GoldPair(ref_id, cand_id, ref_text, cand_text, score))
    if not pairs:
        raise GoldFormatError(f"{name}: no pairs after the header")
    return pairs


def write_sts_gold(pairs: list[GoldPair], path: str | Path | None = None) -> str:
    """Write pairs as a gold TSV (``reference_id candidate_id reference_text candidate_text score``).

    Returns the text; writes it to ``path`` when given. Tabs/newlines inside texts are replaced by spaces.
    """
    def clean(s: str) -> str:
        return " ".join(str(s).split())

    out = ["reference_id\tcandidate_id\treference_text\tcandidate_text\tscore"]
    for p in pairs:
        out.append("\t".join([clean(p.reference_id), clean(p.candidate_id), clean(p.reference_text),
                              clean(p.candidate_text), repr(float(p.score))]))
    text = "\n".join(out) + "\n"
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def references(pairs: list[GoldPair]) -> list[str]:
    """Reference ids in first-seen order."""
    return list(dict.fromkeys(p.reference_id for p in pairs))
