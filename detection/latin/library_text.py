"""Clean text files of The Latin Library (``latin_library.tar.xz``) for training: pure, no Django.

Each file is a web page saved as text. What is not the author's Latin, and is removed here:

- the page title on the first non-blank line (``Vergil: Aeneid I``);
- navigation lines: the footer's author link and the site's section links (``The Latin Library``,
  ``The Classics Page``, ``Christian Latin``, ``Medieval Latin``, ``Neo-Latin``, ``Ius Romanum``,
  ``The Miscellany``), alone on a line or run together (``Ius Romanum The Latin Library The Classics Page``);
  the footer is the trailing run of short lines that holds one of them;
- rows of section numbers (`` 1 \\t 2 \\t 3 …``, ``1.1.1``), a table of contents' Roman numerals alone on
  a line (``IV``), and lines without a letter;
- section markers (``[ 161]``, ``[12a]``) and verse numbers at a line's end (``dum conderet urbem,    5``);
- editors' angle brackets around supplied letters (``no<x>it`` → ``noxit``).

:func:`clean_page` takes one file's text and returns its lines (whitespace collapsed); :func:`clean_lines`
does it for many files.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

NAVIGATION = ("the latin library", "the classics page", "christian latin", "medieval latin", "neo-latin",
              "ius romanum", "the miscellany", "contemporary latin", "the classics homepage")
_NAV_RE = re.compile("|".join(re.escape(n) for n in NAVIGATION), re.IGNORECASE)
_FOOTER_WORDS = 6          # a footer line (author link, section link) is at most this many words
_SECTION_MARK = re.compile(r"\[\s*\d+[a-z]?\s*\]")
_VERSE_NUMBER = re.compile(r"\s{2,}\d{1,4}\s*$")
_ONLY_NUMBERS = re.compile(r"^[\d\s.,;:\-–]*$")
_ONLY_ROMAN = re.compile(r"^[IVXLC]+\.?$")  # a table of contents' row: ``IV``
_LETTER = re.compile(r"[^\W\d_]")
_SPACE = re.compile(r"\s+")


def is_navigation(line: str) -> bool:
    """A line made of site navigation only: once the section names are taken out, at most an author's name
    (three words) is left."""
    if not _NAV_RE.search(line):
        return False
    rest = _NAV_RE.sub(" ", line).split()
    return len(rest) <= 3


def _footer_start(lines: list[str]) -> int:
    """Index where the footer starts: the trailing run of short lines (blank ones included) when it holds a
    navigation line; ``len(lines)`` when there is none."""
    i, has_nav = len(lines), False
    while i > 0:
        line = lines[i - 1]
        if line.strip() and len(line.split()) > _FOOTER_WORDS and not is_navigation(line):
            break
        has_nav = has_nav or is_navigation(line)
        i -= 1
    return i if has_nav else len(lines)


def clean_line(line: str) -> str:
    """One line without section markers, verse numbers, angle brackets and surplus whitespace ('' when nothing
    Latin is left)."""
    line = _VERSE_NUMBER.sub("", line)
    line = _SECTION_MARK.sub(" ", line).replace("<", "").replace(">", "")
    line = _SPACE.sub(" ", line).strip()
    if (not line or _ONLY_NUMBERS.match(line) or _ONLY_ROMAN.match(line) or not _LETTER.search(line)
            or is_navigation(line)):
        return ""
    return line


def clean_page(text: str) -> list[str]:
    """The Latin lines of one Latin Library file (title, navigation, numbers and markup removed)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        return []
    body = lines[first + 1:]
    body = body[:_footer_start(body)]
    return [c for c in map(clean_line, body) if c]


def clean_lines(pages: Iterable[str]) -> Iterator[str]:
    """:func:`clean_page` over many files' texts, their lines in order."""
    for page in pages:
        yield from clean_page(page)
