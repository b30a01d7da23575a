"""Offline Latin lemmatisation: simplemma + spelling variants + our own rules and exception table.

The pipeline for one normalised form (u/i spelling, lower case, enclitic already split off):

1. our own table of frequent forms that simplemma gets wrong or does not know (``OWN_LEMMAS`` below, written
   by hand for this project from ordinary Latin grammar; nothing in it is derived from the UD treebanks,
   which are CC BY-NC-SA and used for measurement only);
2. simplemma's dictionary lookup of the form; simplemma's Latin data mixes u/v spellings, so when the form
   is unknown we retry with consonantal ``u`` written ``v`` (``uoce -> voce -> vox``);
3. for forms still unknown, simplemma's greedy affix search, then a small suffix rule set;
4. the lemma is normalised like the text (lower case, u/i spelling) so that lemmas match across editions.

Lemmas are assigned per word type (no context), which makes a corpus cheap to lemmatise once and cache:
see :func:`lemmatize_corpus`.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Callable, Sequence

import simplemma

from .normalize import normalize_text

__all__ = ["LatinLemmatizer", "SimplemmaLemmatizer", "get_lemmatizer", "lemmatize_corpus", "OWN_LEMMAS",
           "LEMMATIZER_VERSION"]

LEMMATIZER_VERSION = "similia-la-1"

# Frequent forms, hand-written: forms simplemma mislemmatises (``cano -> canus``, ``oris -> auris``) or
# leaves unknown. Keys and values in normalised u/i spelling.
OWN_LEMMAS: dict[str, str] = {
    # verbs simplemma confuses with nouns/adjectives
    "cano": "cano", "canis": "cano", "canit": "cano", "canimus": "cano", "canunt": "cano",
    "cura": "cura", "ora": "os", "oris": "os", "ore": "os",
    "ui": "uis", "uim": "uis", "uis": "uis", "uires": "uis", "uiribus": "uis", "uirium": "uis",
    "sui": "se", "sibi": "se", "sese": "se", "se": "se",
    "diis": "deus", "dis": "deus", "dii": "deus", "di": "deus",
    "domi": "domus", "uocem": "uox", "uoce": "uox", "uoces": "uox", "uocis": "uox", "uocibus": "uox",
    "fata": "fatum", "fatis": "fatum",
    "iussa": "iubeo", "uisa": "uideo", "uisus": "uideo", "latus": "latus",
    "nil": "nihil", "nihilo": "nihil",
    "plus": "multus", "plura": "multus", "plurima": "multus",
    "mihi": "ego", "me": "ego", "mei": "ego", "nobis": "nos", "nostri": "nos", "nostrum": "noster",
    "tibi": "tu", "te": "tu", "tui": "tu", "uobis": "uos", "uestri": "uos",
    "peior": "malus", "peius": "malus", "minus": "paruus", "minor": "paruus", "minimus": "paruus",
    "ueniunt": "uenio", "uenere": "uenio", "uitas": "uito",
    "quid": "quis", "quicquam": "quisquam", "quidquam": "quisquam", "quidquid": "quisquis",
    "quicquid": "quisquis",
    "ait": "aio", "aiunt": "aio", "inquit": "inquam", "inquiunt": "inquam",
    "est": "sum", "es": "sum", "esse": "sum", "fore": "sum", "foret": "sum", "forent": "sum",
    "potest": "possum", "posse": "possum",
    "iesus": "iesus", "iesu": "iesus", "iesum": "iesus", "christus": "christus", "christi": "christus",
    "christo": "christus", "christum": "christus", "dominus": "dominus", "domini": "dominus",
    "domino": "dominus", "dominum": "dominus", "domine": "dominus",
    "israhel": "israhel", "israel": "israhel", "hierusalem": "hierusalem", "ierusalem": "hierusalem",
    "que": "que", "ne": "ne", "ue": "ue",
}

_VOWELS = set("aeiou")
_CONS_U = re.compile(r"(?:(?<=^)|(?<=[aeiouylrn]))u(?=[aeiou])")


def _norm_lemma(lemma: str) -> str:
    out = normalize_text(lemma)
    return out.replace(" ", "") if out else lemma.lower()


def _v_variants(form: str) -> list[str]:
    """Spellings of ``form`` with consonantal u written v (most likely first)."""
    out = []
    allv = _CONS_U.sub("v", form)
    if allv != form:
        out.append(allv)
    if form.startswith("u") and len(form) > 1 and form[1] in _VOWELS:
        first = "v" + form[1:]
        if first not in out:
            out.append(first)
    return out


# (suffix, replacement) tried in order for forms no dictionary knows; the result must be a known lemma.
_SUFFIX_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ibus", ("is", "us", "es", "")),
    ("orum", ("us", "um")),
    ("arum", ("a",)),
    ("ione", ("io",)), ("ionem", ("io",)), ("ionis", ("io",)), ("iones", ("io",)),
    ("atis", ("as",)), ("atem", ("as",)), ("ate", ("as",)),
    ("ae", ("a",)), ("am", ("a",)), ("as", ("a",)), ("is", ("us", "um", "a", "is")),
    ("um", ("us", "um")), ("os", ("us",)), ("o", ("us", "um", "o")), ("i", ("us", "um")),
    ("em", ("is", "es", "")), ("es", ("is", "es", "")), ("e", ("is", "e", "us")),
    ("ant", ("o",)), ("auit", ("o",)), ("auerunt", ("o",)), ("atur", ("o",)), ("antur", ("o",)),
    ("ent", ("eo",)), ("et", ("eo", "o")), ("it", ("o", "io", "eo")), ("unt", ("o", "io")),
)


class LatinLemmatizer:
    """Type-level Latin lemmatiser. ``lemmatize(tokens)`` maps normalised tokens to lemmas."""

    name = "similia"
    version = LEMMATIZER_VERSION

    def __init__(self, own_table: dict[str, str] | None = None, use_greedy: bool = True):
        self.table = dict(OWN_LEMMAS if own_table is None else own_table)
        self.use_greedy = use_greedy
        self._memo: dict[str, str] = {}

    def is_known(self, form: str) -> bool:
        if form in self.table or simplemma.is_known(form, lang="la"):
            return True
        return any(simplemma.is_known(v, lang="la") for v in _v_variants(form))

    def _lookup(self, form: str) -> str | None:
        if simplemma.is_known(form, lang="la"):
            return simplemma.lemmatize(form, lang="la")
        for variant in _v_variants(form):
            if simplemma.is_known(variant, lang="la"):
                return simplemma.lemmatize(variant, lang="la")
        return None

    def lemma(self, form: str) -> str:
        cached = self._memo.get(form)
        if cached is not None:
            return cached
        result = self._lemma(form)
        self._memo[form] = result
        return result

    def _lemma(self, form: str) -> str:
        if not form:
            return form
        own = self.table.get(form)
        if own is not None:
            return own
        if not form.isascii():  # Greek or other script: keep the form
            return form
        found = self._lookup(form)
        if found is not None:
            return _norm_lemma(found)
        if self.use_greedy:
            greedy = simplemma.lemmatize(form, lang="la", greedy=True)
            if greedy and _norm_lemma(greedy) != form:
                return _norm_lemma(greedy)
        for suffix, repls in _SUFFIX_RULES:
            if form.endswith(suffix) and len(form) - len(suffix) >= 3:
                stem = form[: -len(suffix)]
                for rep in repls:
                    cand = stem + rep
                    if cand != form and self._lookup(cand) is not None:
                        return _norm_lemma(self._lookup(cand))
        return form

    def lemmatize(self, tokens: Sequence[str]) -> list[str]:
        memo = self._memo
        out = []
        for tok in tokens:
            lem = memo.get(tok)
            if lem is None:
                lem = self.lemma(tok)
            out.append(lem)
        return out


class SimplemmaLemmatizer:
    """simplemma alone (the baseline we measure against)."""

    name = "simplemma"
    version = "simplemma-" + getattr(simplemma, "__version__", "?")

    def lemmatize(self, tokens: Sequence[str]) -> list[str]:
        return [simplemma.lemmatize(t, lang="la") if t else t for t in tokens]


_DEFAULT: LatinLemmatizer | None = None


def get_lemmatizer(name: str = "similia"):
    """The project's lemmatiser (``"similia"``, shared instance) or the ``"simplemma"`` baseline."""
    global _DEFAULT
    if name == "simplemma":
        return SimplemmaLemmatizer()
    if name != "similia":
        raise ValueError(f"unknown lemmatiser {name!r}; use 'similia' or 'simplemma'")
    if _DEFAULT is None:
        _DEFAULT = LatinLemmatizer()
    return _DEFAULT


def preload() -> None:
    """Load simplemma's Latin dictionary now (its first lookup otherwise does: 1.2 s and about 107 MiB here), so
    that a worker process pays it at start-up rather than inside its first Latin job."""
    simplemma.is_known("arma", lang="la")


def default_cache_dir() -> Path:
    root = os.environ.get("SIMILIA_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "similia")
    return Path(root) / "lemmas"


def lemmatize_corpus(
    token_lists: Sequence[Sequence[str]],
    *,
    cache_dir: str | os.PathLike | None = None,
    lemmatizer=None,
    progress: Callable[[float, str], None] | None = None,
) -> list[list[str]]:
    """Lemmatise every token list of a corpus, once per word type, with an optional on-disk cache.

    The cache file is keyed by a hash of the corpus vocabulary and the lemmatiser version, so a corpus
    (or any corpus with the same vocabulary) is lemmatised once; later runs only read the form->lemma map.
    """
    lem = lemmatizer or get_lemmatizer()
    vocab = sorted({t for toks in token_lists for t in toks})
    table: dict[str, str] | None = None
    path = None
    if cache_dir is not None:
        h = hashlib.sha256(("\n".join(vocab) + "\0" + getattr(lem, "version", "?")).encode()).hexdigest()[:24]
        path = Path(cache_dir) / f"lemmas-{h}.json"
        if path.exists():
            try:
                table = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                table = None
    if table is None:
        table = {}
        n = len(vocab)
        step = max(1, n // 20)
        for i, form in enumerate(vocab):
            table[form] = lem.lemmatize([form])[0]
            if progress and i % step == 0:
                progress(i / max(n, 1), f"lemmatising {i}/{n} word types")
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, path)
    if progress:
        progress(1.0, f"lemmatised {len(vocab)} word types")
    return [[table[t] for t in toks] for toks in token_lists]

