"""The one runner of the benchmarks in perf/: every ``perf/NAME.py`` (not ``_``-prefixed) is benchmark NAME, found
by its file, so a new script joins without an edit here.

    .venv/bin/python -m perf list              every benchmark: name, its stored figures, what it measures
    .venv/bin/python -m perf run NAME [ARGS]   run one (its own options after the name: ``run NAME --help``)
    .venv/bin/python -m perf check             run every checkable one (``make perf``): exit 1 when one fails

A benchmark's stored figures are the YAML files under ``perf/expected/`` whose ``command`` names its script
(``perf/expected/runner/retired.yaml``: the scripts removed once their figures were stored, each with its command
and the commit that holds it). A script is checkable when it declares, at module level, ``PERF_CHECK = [ARGS]``:
the arguments with which it re-checks its stored figures and exits non-zero on drift. The shared helpers are ``perf/_testdb.py`` (a
throwaway test database) and ``perf/_annotation_http.py`` (gunicorn serving a tree, an HTTP client).
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import yaml

PERF = Path(__file__).resolve().parent
ROOT = PERF.parent


def benchmarks() -> dict[str, Path]:
    """Name → script, every ``perf/*.py`` but the helpers (``_``-prefixed) and this runner."""
    return {p.stem: p for p in sorted(PERF.glob("*.py")) if not p.name.startswith("_")}


def _module(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def summary(path: Path) -> str:
    """The first line of the script's docstring."""
    doc = ast.get_docstring(_module(path)) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def check_args(path: Path) -> list[str] | None:
    """``PERF_CHECK``'s arguments when the script declares it (a literal list of strings), else None."""
    for node in _module(path).body:
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]  # `X = …` or `X: T = …`
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and any(getattr(t, "id", "") == "PERF_CHECK" for t in targets):
            value = ast.literal_eval(node.value)
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise ValueError(f"{path.name}: PERF_CHECK must be a list of strings")
            return value
    return None


def stored_figures(name: str) -> list[Path]:
    """The YAML files under perf/expected/ whose ``command`` runs ``perf/NAME.py``."""
    out = []
    for f in sorted((PERF / "expected").rglob("*.yaml")):
        data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        if isinstance(data, dict) and f"perf/{name}.py" in str(data.get("command", "")):
            out.append(f)
    return out


def _list() -> int:
    rows = []
    for name, path in benchmarks().items():
        files = ", ".join(str(f.relative_to(PERF)) for f in stored_figures(name))
        check = check_args(path)
        rows.append((name, "check" if check is not None else "", files or "–", summary(path)))
    width = max(len(r[0]) for r in rows)
    for name, check, files, text in rows:
        print(f"{name:<{width}}  {check:<5}  {text}\n{'':<{width}}         stored: {files}")
    return 0


def run(name: str, args: list[str]) -> int:
    scripts = benchmarks()
    if name not in scripts:
        print(f"no benchmark {name!r}; `python -m perf list` names them: {', '.join(scripts)}", file=sys.stderr)
        return 2
    return subprocess.call([sys.executable, str(scripts[name]), *args], cwd=ROOT)


def check() -> int:
    failed = []
    for name, path in benchmarks().items():
        args = check_args(path)
        if args is None:
            continue
        print(f"== {name} {' '.join(args)}", flush=True)
        if run(name, args) != 0:
            failed.append(name)
    print(f"checked; failed: {', '.join(failed)}" if failed else "checked: no drift")
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["list"]:
        return _list()
    if argv[:1] == ["run"] and len(argv) > 1:
        return run(argv[1], argv[2:])
    if argv[:1] == ["check"]:
        return check()
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
