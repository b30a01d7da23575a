"""The product's size, counted one way: lines and code lines per app, long functions, wide signatures.

Product = the apps and ``config/`` (``*.py``), without migrations and tests. Code lines leave out blank lines,
comment-only lines and docstrings. ``--check`` compares with ``BUDGET`` below and exits 1 above it.

    python scripts/line_budget.py            # the table
    python scripts/line_budget.py --check    # CI: fail above the budget

Raising the budget is a reviewed commit that says which feature paid for it.
"""
from __future__ import annotations

import argparse
import ast
import io
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("annotation", "benchmarks", "config", "core", "detection", "frontend", "jobs", "workbench")
BUDGET = {"lines": 43_452, "code_lines": 30_182, "long_functions": 42, "wide_functions": 39}
LONG, WIDE = 50, 10  # a function over LONG lines is long; one with WIDE or more parameters is wide


def product_files(root: Path = ROOT) -> list[Path]:
    return sorted(p for app in APPS for p in (root / app).rglob("*.py") if "migrations" not in p.parts)


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                    first.value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def _code_lines(source: str, tree: ast.AST) -> int:
    skip = _docstring_lines(tree)
    code: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                        tokenize.ENDMARKER):
            continue
        code.update(line for line in range(tok.start[0], tok.end[0] + 1) if line not in skip)
    return len(code)


def _n_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return len([n for n in names if n not in ("self", "cls")])


def measure(path: Path, root: Path = ROOT) -> dict:
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(path))
    fns = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return {
        "lines": len(source.splitlines()),
        "code_lines": _code_lines(source, tree),
        "long": [f"{path.relative_to(root)}:{f.lineno} {f.name}" for f in fns
                 if f.end_lineno - f.lineno + 1 > LONG],
        "wide": [f"{path.relative_to(root)}:{f.lineno} {f.name}" for f in fns if _n_params(f) >= WIDE],
    }


def totals(root: Path = ROOT) -> dict:
    per_app: dict[str, dict[str, int]] = {}
    long: list[str] = []
    wide: list[str] = []
    for path in product_files(root):
        m = measure(path, root)
        app = per_app.setdefault(path.relative_to(root).parts[0], {"lines": 0, "code_lines": 0})
        app["lines"] += m["lines"]
        app["code_lines"] += m["code_lines"]
        long += m["long"]
        wide += m["wide"]
    return {
        "per_app": per_app,
        "lines": sum(a["lines"] for a in per_app.values()),
        "code_lines": sum(a["code_lines"] for a in per_app.values()),
        "long_functions": long,
        "wide_functions": wide,
    }


def figures(t: dict) -> dict[str, int]:
    """The four figures the budget holds."""
    return {"lines": t["lines"], "code_lines": t["code_lines"],
            "long_functions": len(t["long_functions"]), "wide_functions": len(t["wide_functions"])}


def over_budget(figs: dict[str, int], budget: dict[str, int] = BUDGET) -> list[str]:
    return [f"{k} {v:,} > {budget[k]:,}" for k, v in figs.items() if v > budget[k]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a figure is above the budget")
    parser.add_argument("--list", action="store_true", help="also list the long and the wide functions")
    args = parser.parse_args(argv)
    t = totals()
    print(f"{'app':<12}{'lines':>8}{'code':>8}")
    for app, a in sorted(t["per_app"].items()):
        print(f"{app:<12}{a['lines']:>8,}{a['code_lines']:>8,}")
    figs = figures(t)
    print(f"{'product':<12}{t['lines']:>8,}{t['code_lines']:>8,}")
    print(f"functions over {LONG} lines: {figs['long_functions']}; with {WIDE}+ parameters: "
          f"{figs['wide_functions']}")
    if args.list:
        print("\n".join(["long:", *t["long_functions"], "wide:", *t["wide_functions"]]))
    over = over_budget(figs)
    if args.check and over:
        print("over the budget: " + "; ".join(over), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
