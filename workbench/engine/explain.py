"""A candidate's explanation as the exports and the side-by-side view show it (pure: no Django).

The detection engine gives each candidate ``{"channels": [{"name", "score", "weight", "contribution",
"matches": [[query_word, source_word], ...]}, ...], "uniqueness": int | None, "uniqueness_corpus": str (what it
counts over: the reference corpus's loci, or the searched sources), "rarity": {word: float}, "query_lines": [...],
"source_lines": [...]}``; ``{}`` means no explanation (a run from before explanations,
a method without them). Everything here reads that shape defensively: a missing or malformed part is left out,
never an error, so an old run or a partial explanation renders cleanly.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

#: the flat CSV columns of an explanation, after the result columns
CSV_COLUMNS = ("channels", "contributions", "uniqueness", "matched_words")


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def channels(explain) -> list[dict]:
    """The well-formed channels: name, score, weight, contribution (numbers or None) and matches as
    ``(query_word, source_word)`` pairs of strings; a channel without a name is dropped."""
    if not isinstance(explain, Mapping) or not isinstance(explain.get("channels"), list):
        return []
    out = []
    for ch in explain["channels"]:
        if not isinstance(ch, Mapping) or not isinstance(ch.get("name"), str) or not ch["name"]:
            continue
        matches = []
        for m in ch.get("matches") or []:
            if isinstance(m, (list, tuple)) and len(m) == 2 and all(isinstance(w, str) for w in m):
                matches.append((m[0], m[1]))
        out.append({"name": ch["name"], "score": _number(ch.get("score")), "weight": _number(ch.get("weight")),
                    "contribution": _number(ch.get("contribution")), "matches": matches})
    return out


def fired(explain) -> list[dict]:
    """The channels that fired: a non-zero contribution or at least one matched word, largest contribution
    first (ties: the engine's order)."""
    out = [ch for ch in channels(explain) if ch["contribution"] or ch["matches"]]
    return sorted(out, key=lambda ch: -(ch["contribution"] or 0.0))


def uniqueness(explain) -> int | None:
    value = explain.get("uniqueness") if isinstance(explain, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def uniqueness_corpus(explain) -> str:
    value = explain.get("uniqueness_corpus") if isinstance(explain, Mapping) else None
    return value[:200] if isinstance(value, str) else ""


def how_unique(n: int | None) -> str:
    """The uniqueness in plain words: how many other passages of the reference corpus hold every word the two
    texts share (fewer: a more telling parallel)."""
    if n is None:
        return "not measured"
    if n == 0:
        return "no other passage has these words together: unique"
    word = "a rare" if n <= 10 else "an uncommon" if n <= 100 else "a common"
    return f"shared by {n:,} other passage{'' if n == 1 else 's'}: {word} combination"


def how_rare(value: float) -> str:
    """A word's rarity (log of reference-corpus tokens per occurrence) in plain words: rare from about one word
    in 60,000, uncommon from one in 3,000, else common."""
    return "rare" if value >= 11 else "uncommon" if value >= 8 else "common"


def rarity(explain) -> dict[str, float]:
    raw = explain.get("rarity") if isinstance(explain, Mapping) else None
    if not isinstance(raw, Mapping):
        return {}
    return {w: v for w, v in ((str(k), _number(v)) for k, v in raw.items()) if v is not None}


def flat(explain) -> dict:
    """The CSV's explanation columns: fired channels ``lemma;sound``, contributions ``lemma=0.4120;sound=0.1000``,
    uniqueness (empty when unknown), matched words ``lemma:arma/arma sound:virum/viro`` (all empty without one)."""
    chans = fired(explain)
    return {
        "channels": ";".join(ch["name"] for ch in chans),
        "contributions": ";".join(f"{ch['name']}={ch['contribution']:.4f}" for ch in chans
                                  if ch["contribution"] is not None),
        "uniqueness": uniqueness(explain),
        "matched_words": " ".join(f"{ch['name']}:{q}/{s}" for ch in chans for q, s in ch["matches"]),
    }


def view(explain) -> dict | None:
    """What the side-by-side view draws, or None without an explanation: every channel with its share of the
    summed positive contributions (the bar), the words each side matched per channel (to colour them), the
    uniqueness and the matched words' rarity (rarest first)."""
    chans = channels(explain)
    if not chans:
        return None
    total = sum(max(ch["contribution"] or 0.0, 0.0) for ch in chans)
    words = {w for ch in chans for m in ch["matches"] for w in m}
    rare = rarity(explain)
    return {
        "channels": [{**ch, "matches": [list(m) for m in ch["matches"]],
                      "share": (max(ch["contribution"] or 0.0, 0.0) / total) if total > 0 else 0.0} for ch in chans],
        "uniqueness": uniqueness(explain),
        "uniqueness_text": how_unique(uniqueness(explain)),
        "uniqueness_corpus": uniqueness_corpus(explain),
        "rarity": sorted(([w, v, how_rare(v)] for w, v in rare.items() if w in words or not words),
                         key=lambda wv: -wv[1]),
    }
