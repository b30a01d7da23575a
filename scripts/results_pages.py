"""Write the docs' results pages from the stored expected figures, so no figure on them is typed by hand.

    .venv/bin/python scripts/results_pages.py           # (re)write docs/results/*.md
    .venv/bin/python scripts/results_pages.py --check   # exit 1 naming each page that differs or has no source

Each ``perf/expected/NAME.yaml`` (the files `evaluate --suite --expected` writes and `perf/suite_check.py` re-runs),
each ``perf/expected/annotation/NAME.yaml`` (figures of the annotation perf scripts, e.g. `perf/adaptive_bench.py`),
each ``perf/expected/workbench/NAME.yaml`` (`perf/verdict_rerank.py`)
and each data file ``docs/results/NAME.yaml`` becomes ``docs/results/NAME.md``; ``docs/results/index.md`` lists
them. The rendering knows no file's shape: top-level scalars and lists of scalars form the page's first table,
every mapping becomes a section, a mapping of mappings of scalars one table (rows × columns, in the file's order),
deeper mappings nested sections. Numbers are written as the file stores them. The docs build
(`scripts/mkdocs_hooks.py`) and `tests/core/test_docs_site.py` refuse pages that differ from what this writes.
"""
from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("perf/expected", "perf/expected/annotation", "perf/expected/workbench", "perf/expected/runner",
           "perf/expected/corpus", "docs/results")  # the folders are not suite files, so
# perf/suite_check.py (which re-runs perf/expected/*.yaml) leaves them alone
RESULTS = "docs/results"
MARK = "<!-- written by scripts/results_pages.py from {source}: change that file, then run the script -->"
TITLE_KEYS = ("title", "name")
TEXT_KEYS = ("description", "note", "notes")
# How the known top-level entries of the expected files read on the page (any other key is shown as it is named).
LABELS = {"command": "command", "tolerance": "tolerance (absolute, per figure)", "measured": "measured",
          "suite": "suite settings", "figures": "figures"}


def _cell(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):  # names (methods, benchmarks) as code: `a>b(x_y)` stays as written
        return ", ".join(_code(v) if isinstance(v, str) else _cell(v) for v in value) or "–"
    if isinstance(value, dict):  # a mapping inside a table's cell: "key: value; …", a deeper one in parentheses
        return "; ".join(f"{_cell(k)}: ({_cell(v)})" if isinstance(v, dict) else f"{_cell(k)}: {_cell(v)}"
                         for k, v in value.items()) or "–"
    text = str(value).replace("|", "\\|").replace("\n", " ")
    return text


def _code(value) -> str:
    text = str(value).replace("|", "\\|").replace("\n", " ")
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _scalar(value) -> bool:
    return not isinstance(value, (dict, list)) or (isinstance(value, list) and all(_scalar(v) and not isinstance(
        v, list) for v in value))


def _key_value_table(items: list[tuple[str, object]], *, code_keys=("command",)) -> list[str]:
    lines = ["| | |", "|---|---|"]
    for key, value in items:
        shown = _code(value) if key in code_keys else _cell(value)
        lines.append(f"| {LABELS.get(key, _cell(key))} | {shown} |")
    return lines


def _grid(mapping: dict, corner: str, *, named_rows: bool = True) -> list[str]:
    """A mapping of mappings as one table: a row per outer key (a name, as code), a column per inner key."""
    columns: list = []
    for row in mapping.values():
        columns += [c for c in row if c not in columns]
    lines = [f"| {corner} | " + " | ".join(_cell(c) for c in columns) + " |",
             "|---|" + "---|" * len(columns)]
    for name, row in mapping.items():
        lines.append(f"| {_code(name) if named_rows else _cell(name)} | "
                     + " | ".join(_cell(row.get(c)) for c in columns) + " |")
    return lines


def _rows(items: list) -> list[str]:
    """A list of mappings (or values) as one table, numbered."""
    rows = {n + 1: item if isinstance(item, dict) else {"value": item} for n, item in enumerate(items)}
    return _grid(rows, "#", named_rows=False)


def _is_grid(mapping: dict) -> bool:
    return bool(mapping) and all(isinstance(v, dict) and v and all(_scalar(x) for x in v.values())
                                 for v in mapping.values())


def _section(mapping: dict, level: int, corner: str) -> list[str]:
    if _is_grid(mapping):
        return _grid(mapping, corner)
    scalars = [(k, v) for k, v in mapping.items() if _scalar(v)]
    lines = _key_value_table(scalars) if scalars else []
    for key, value in mapping.items():
        if _scalar(value):
            continue
        lines += [*([""] if lines else []), f"{'#' * min(level, 6)} {_cell(key)}", ""]
        lines += _section(value, level + 1, corner) if isinstance(value, dict) else _rows(value)
    return lines


def render(data: dict, source: str) -> str:
    """The page for one data file (`source`: its path from the repository root)."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: the file holds no mapping")
    title = next((str(data[k]) for k in TITLE_KEYS if data.get(k)), Path(source).stem)
    lines = [MARK.format(source=source), f"# Results: {_cell(title)}", "",
             f"Every figure on this page is read from `{source}` (written by the command named below, and checked "
             f"against a re-run by `perf/suite_check.py` for the suite's files); this page is generated from it.", ""]
    for key in TEXT_KEYS:
        if isinstance(data.get(key), str):
            lines += [data[key].strip(), ""]
    rest = {k: v for k, v in data.items() if k not in TITLE_KEYS + TEXT_KEYS}
    top = [(k, v) for k, v in rest.items() if _scalar(v)]
    if top:
        lines += _key_value_table(top) + [""]
    for key, value in rest.items():
        if _scalar(value):
            continue
        lines += [f"## {LABELS.get(key, _cell(key))}", ""]
        lines += _section(value, 3, "method" if key == "figures" else "") if isinstance(value, dict) else _rows(value)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _sources(root: Path) -> dict[str, Path]:
    """{page name: data file}; a name in both folders is an error (one page, one source)."""
    found: dict[str, Path] = {}
    for folder in SOURCES:
        for path in sorted((root / folder).glob("*.yaml")):
            if path.stem in found:
                raise ValueError(f"two sources for docs/results/{path.stem}.md: {found[path.stem].relative_to(root)} "
                                 f"and {path.relative_to(root)}")
            if path.stem == "index":
                raise ValueError(f"{path.relative_to(root)}: 'index' is the list of results pages")
            found[path.stem] = path
    return found


def pages(root: Path = ROOT) -> dict[str, str]:
    """{path under the root: the page's text} for every results page, the index included."""
    out = {}
    entries = []
    for name, path in _sources(root).items():
        source = path.relative_to(root).as_posix()
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        out[f"{RESULTS}/{name}.md"] = render(data, source)
        measured = data.get("measured") if isinstance(data, dict) else None
        when = measured.get("date") if isinstance(measured, dict) else None
        entries.append(f"- [{name}]({name}.md): from `{source}`" + (f", measured {when}" if when else ""))
    out[f"{RESULTS}/index.md"] = "\n".join([
        MARK.format(source="the data files listed"), "# Stored results", "",
        "Figures stored by the commands that measured them (`perf/expected/*.yaml`: command, figures, tolerance, "
        "machine and libraries; `perf/suite_check.py` re-runs them and fails on drift), one page each:", "",
        *entries]) + "\n"
    return out


def _generated(page: Path) -> bool:
    return page.read_text(encoding="utf-8").startswith(MARK.split("{")[0])


def stale(root: Path = ROOT) -> list[str]:
    """What differs between docs/results/ and what `pages` writes: pages to (re)write, generated pages whose
    source is gone, and pages nothing generates (docs/results/ holds generated pages only)."""
    want = pages(root)
    problems = [f"{p}: differs from its source (run scripts/results_pages.py)" for p, text in want.items()
                if not (root / p).exists() or (root / p).read_text(encoding="utf-8") != text]
    for page in sorted((root / RESULTS).glob("*.md")):
        rel = page.relative_to(root).as_posix()
        if rel in want:
            continue
        problems.append(f"{rel}: its source is gone (run scripts/results_pages.py)" if _generated(page) else
                        f"{rel}: typed by hand; {RESULTS}/ holds generated pages only (give it a data file "
                        f"{RESULTS}/{page.stem}.yaml, or move it out)")
    return problems


def write(root: Path = ROOT) -> list[str]:
    """Write every page that differs, delete generated pages without a source; returns what changed."""
    changed = stale(root)
    want = pages(root)
    for path, text in want.items():
        target = root / path
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    for page in (root / RESULTS).glob("*.md"):
        if page.relative_to(root).as_posix() not in want and _generated(page):
            page.unlink()
    return changed


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        problems = stale()
        for p in problems:
            print(p)
        return 1 if problems else 0
    if argv:
        print("usage: scripts/results_pages.py [--check]", file=sys.stderr)
        return 2
    for line in write():
        print("written:", line.split(":")[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
