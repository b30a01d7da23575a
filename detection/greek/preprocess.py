"""Configurable preprocessing for (Byzantine) Greek verses.

The paper's setting (Swaelens et al., §5) is: lowercase, strip punctuation and special characters, keep the
diacritics. Each further normalisation is an option of :class:`GreekPreprocessor`:

- ``editorial``: how DBBE editorial marks are handled. ``"expand"`` keeps the letters of an abbreviation
  expansion (``θ(ε)ῶ`` → ``θεῶ``), ``"drop"`` keeps only what the scribe wrote (``θ(ε)ῶ`` → ``θῶ``),
  ``"keep"`` leaves the brackets to the punctuation step. Lacunae (``(...)``, ``[…]``, ``[.]``) are removed
  when ``drop_lacunae``; editorial supplements ``[ἰδεῖν]`` and ``<ὑ>`` keep their letters. Manuscript line
  divisions inside words (``πρῶ|τον``) are joined.
- ``strip_diacritics``: remove all combining marks (accents, breathings, iota subscript, diaeresis).
- ``normalise_grave``: grave → acute (``καὶ`` → ``καί``), the usual citation-form convention.
- ``final_sigma``: word-final σ → ς and word-internal ς → σ.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass

_GRAVE = "\u0300"
_ACUTE = "\u0301"

# Lacunae: (...), (…), [...], […], [.], [..], <...> and bare ellipses.
_LACUNA_RE = re.compile(r"[\(\[<]\s*(?:\.+|…+)\s*[\)\]>]|\.{2,}|…")
# Abbreviation expansion: letters (and marks) inside round brackets.
_EXPANSION_RE = re.compile(r"\(([^\W\d_]+)\)")
# Manuscript line/column division marks that can split a word.
_JOIN_CHARS = "|\\¦"


def _is_word_char(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat[0] in ("L", "M")


@dataclass(frozen=True)
class GreekPreprocessor:
    lowercase: bool = True
    strip_punctuation: bool = True
    strip_diacritics: bool = False
    normalise_grave: bool = False
    final_sigma: bool = False
    editorial: str = "expand"  # "expand" | "drop" | "keep"
    drop_lacunae: bool = True

    def __post_init__(self) -> None:
        if self.editorial not in ("expand", "drop", "keep"):
            raise ValueError(f"editorial must be 'expand', 'drop' or 'keep', not {self.editorial!r}")

    @classmethod
    def paper(cls) -> "GreekPreprocessor":
        """The paper's preprocessing: lowercase, no punctuation/special characters, diacritics kept."""
        return cls()

    def to_dict(self) -> dict:
        return asdict(self)

    # -- steps --------------------------------------------------------------------------------------
    def normalise(self, text: str) -> str:
        """Return the normalised verse as one space-separated string."""
        return " ".join(self.tokenize(text))

    def tokenize(self, text: str) -> list[str]:
        s = unicodedata.normalize("NFC", text or "")
        if self.drop_lacunae:
            s = _LACUNA_RE.sub(" ", s)
        if self.editorial == "expand":
            s = _EXPANSION_RE.sub(r"\1", s)
        elif self.editorial == "drop":
            s = _EXPANSION_RE.sub("", s)
        for ch in _JOIN_CHARS:
            s = s.replace(ch, "")
        if self.editorial != "keep":
            # supplements keep their letters: [ἰδεῖν] → ἰδεῖν, ε<ὑ>ρὴν → εὑρὴν
            s = re.sub(r"[\[\]<>]", "", s)
        if self.lowercase:
            s = s.lower()
        if self.strip_diacritics or self.normalise_grave:
            d = unicodedata.normalize("NFD", s)
            if self.strip_diacritics:
                d = "".join(ch for ch in d if unicodedata.category(ch) != "Mn")
            else:
                d = d.replace(_GRAVE, _ACUTE)
            s = unicodedata.normalize("NFC", d)
        if self.strip_punctuation:
            s = "".join(ch if _is_word_char(ch) else " " for ch in s)
        tokens = s.split()
        if self.final_sigma:
            tokens = [_fix_sigma(t) for t in tokens]
        return tokens

    def __call__(self, text: str) -> list[str]:
        return self.tokenize(text)


def _fix_sigma(token: str) -> str:
    t = token.replace("ς", "σ")
    if t.endswith("σ"):
        t = t[:-1] + "ς"
    return t


def grave_to_acute(text: str) -> str:
    d = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", d.replace(_GRAVE, _ACUTE))


def make_preprocessor(spec: "GreekPreprocessor | dict | None") -> GreekPreprocessor:
    if spec is None:
        return GreekPreprocessor()
    if isinstance(spec, GreekPreprocessor):
        return spec
    return GreekPreprocessor(**spec)
