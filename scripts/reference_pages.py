"""Write the reference pages from what they describe, so they stay true.

    .venv/bin/python scripts/reference_pages.py           # (re)write them
    .venv/bin/python scripts/reference_pages.py --check   # exit 1 naming each page that differs

- ``docs/reference/cli.md``: every management command of Similia's apps, from its own argparse parser (options,
  values, defaults, help), Django's common options left out.
- ``docs/reference/endpoints.md``: every API endpoint, from the OpenAPI schema the server serves (methods, what
  each does, its query parameters, the answers it describes).
- ``docs/reference/settings.md``, below its hand-written introduction: every environment variable the settings
  read (``config/settings/*.py``, ``config/env.py``), found in their source: how it is read, its default in each
  settings module, and the comment beside it in the code as its meaning.

`tests/core/test_reference_pages.py` fails when a page differs from what this writes.
"""
from __future__ import annotations

import argparse
import ast
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("annotation", "benchmarks", "core", "detection", "frontend", "jobs", "workbench")
SETTINGS_MODULES = ("base", "local", "test", "production")
READERS = {"env_str": "text", "env_int": "integer", "env_bool": "true/false", "env_list": "comma-separated list",
           "env_db": "database URL", "env_broker": "broker URL"}
MARK = "<!-- written by scripts/reference_pages.py from {source}: change that, then run the script -->"
SETTINGS_MARK = "<!-- below: written by scripts/reference_pages.py from config/settings/*.py and config/env.py -->"


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text) -> str:
    text = _cell(text)
    return f"`` {text} ``" if "`" in text else f"`{text}`"


# --------------------------------------------------------------------------------------------- commands
def _django():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _option_rows(parser: argparse.ArgumentParser, common: set[str]) -> list[str]:
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if action.dest in common or isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        name = ", ".join(action.option_strings) or action.dest
        if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._CountAction)):
            value = "(flag)"
        elif action.choices:
            value = " \\| ".join(_code(c) for c in action.choices)
        else:
            value = action.metavar or (action.type.__name__ if callable(action.type) and hasattr(action.type, "__name__")
                                       else "text")
            value = _cell(value).upper() if value == action.metavar else value
        if action.nargs in ("*", "+") or isinstance(action, argparse._AppendAction):
            value += " (repeatable)" if isinstance(action, argparse._AppendAction) else f" ({action.nargs})"
        default = action.default
        if default in (None, argparse.SUPPRESS, False) or isinstance(action, argparse._StoreTrueAction):
            shown = "–"
        else:
            shown = _code(str(default).replace(str(ROOT), "."))
        if action.required or not action.option_strings:
            shown = "required"
        text = formatter._expand_help(action) if action.help else ""
        rows.append(f"| {_code(name)} | {value} | {shown} | {_cell(text)} |")
    return rows


def cli_page() -> str:
    _django()
    from django.core.management import get_commands, load_command_class
    from django.core.management.base import BaseCommand

    common = {a.dest for a in BaseCommand().create_parser("manage.py", "x")._actions}
    ours = sorted((name, app) for name, app in get_commands().items() if app in APPS)
    lines = [MARK.format(source="each command's argparse parser"), "# Command options", "",
             "Every `manage.py` command of Similia, with the options its parser declares (the conventions they share: "
             "[Commands](commands.md)). Django's common options (`--settings`, `--verbosity`, `--traceback`, …) are "
             "left out. `manage.py NAME --help` prints the same.", ""]
    lines += [f"- [`{name}`](#{name}) ({app})" for name, app in ours]
    for name, app in ours:
        parser = load_command_class(app, name).create_parser("manage.py", name)
        lines += ["", f"## {name}", "", f"`manage.py {name}` ({app}/management/commands/{name}.py)", ""]
        if parser.description:
            lines += [" ".join(parser.description.split()), ""]
        rows = _option_rows(parser, common)
        lines += (["| option | value | default | what it does |", "|---|---|---|---|", *rows] if rows
                  else ["No options."])
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------------------------- endpoints
def _first_sentence(text: str) -> str:
    text = " ".join((text or "").split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return match.group(1) if match else text


def _component(schema: dict | None) -> str:
    """The described shape's name (`Run`, a list of `Run`, a page of `Run`), or its type."""
    if not schema:
        return ""
    if "$ref" in schema:
        return f"`{schema['$ref'].rsplit('/', 1)[-1]}`"
    if schema.get("type") == "array":
        inner = _component(schema.get("items"))
        return f"list of {inner}" if inner else "list"
    return schema.get("type", "")


def _bodies(content: dict) -> str:
    shapes = {}
    for media, body in (content or {}).items():
        shape = _component(body.get("schema")) or media
        shapes.setdefault(shape, []).append(media.split("/")[-1])
    if len(shapes) == 1:  # one shape in every media type (JSON, form, multipart): its name is enough
        (shape, media), = shapes.items()
        return shape if "json" in media else f"{shape} ({', '.join(media)})"
    return "; ".join(f"{shape} ({', '.join(media)})" for shape, media in shapes.items())


def endpoints_page() -> str:
    _django()
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    lines = [MARK.format(source="the OpenAPI schema"), "# Every API endpoint", "",
             "From the OpenAPI schema the server serves at `/api/schema/` (Swagger UI `/api/docs/`, ReDoc "
             "`/api/redoc/`, where each request and answer is described field by field: the names below are its "
             "components). The map by area, the authentication and the page shape are on [API](api.md).", "",
             "| endpoint | method | what it does | query parameters | takes | answers |", "|---|---|---|---|---|---|"]
    for path, operations in schema["paths"].items():
        for method, op in operations.items():
            what = op.get("summary") or _first_sentence(op.get("description", "")) or "–"
            params = ", ".join(f"`{p['name']}`" for p in op.get("parameters", []) if p.get("in") == "query") or "–"
            takes = _bodies((op.get("requestBody") or {}).get("content")) or "–"
            answers = ", ".join(f"{code} {_bodies(r.get('content'))}".strip()
                                for code, r in sorted(op.get("responses", {}).items()))
            lines.append(f"| `{path}` | {method.upper()} | {_cell(what)} | {params} | {takes} | {answers} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------- settings
def _number(node):
    """The value of a constant arithmetic expression (`6 * 3600`, `2 << 30`), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp):
        left, right = _number(node.left), _number(node.right)
        if left is None or right is None:
            return None
        ops = {ast.Mult: lambda a, b: a * b, ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
               ast.LShift: lambda a, b: a << b}
        op = ops.get(type(node.op))
        return op(left, right) if op else None
    return None


def _default(source: str, call: ast.Call) -> str:
    if len(call.args) < 2:
        return "required"
    node = call.args[1]
    value = _number(node)
    text = ast.get_source_segment(source, node)
    if value is not None:
        shown = f"{value:,}" if isinstance(value, int) else repr(value)
        return shown if shown.replace(",", "") == text.replace("_", "") else f"{shown} (`{text}`)"
    if isinstance(node, ast.Constant):
        return _code(node.value) if node.value != "" else "empty"
    if isinstance(node, (ast.List, ast.Tuple)) and not node.elts:
        return "empty"
    return _code(text)


def _comments_above(lines: list[str], lineno: int) -> list[str]:
    """The comment lines right above line `lineno` (1-based), section rules (`# --- Celery ---`) left out."""
    out = []
    n = lineno - 2
    while n >= 0 and lines[n].strip().startswith("#"):
        text = lines[n].strip().lstrip("#").strip()
        if not text.startswith("---"):
            out.insert(0, text)
        n -= 1
    return out


def _meaning(lines: list[str], statements: list[ast.stmt], stmt: ast.stmt, call: ast.AST, names: set[str]) -> str:
    """The code's comment for a read: inline on its line, right above the call or its statement, or above an
    earlier statement of the same run (no blank line between) when that comment names it (one of `names`)."""
    inline = lines[call.lineno - 1].split("  # ", 1)
    if len(inline) == 2 and "noqa" not in inline[1]:
        return inline[1].strip()
    for lineno in dict.fromkeys((call.lineno, stmt.lineno)):
        if _comments_above(lines, lineno):
            return " ".join(_comments_above(lines, lineno))
    index = statements.index(stmt)
    while index > 0 and statements[index - 1].end_lineno == statements[index].lineno - 1:
        index -= 1
        above = " ".join(_comments_above(lines, statements[index].lineno))
        if above and any(re.search(rf"\b{re.escape(n)}\b", above) for n in names if n):
            return above
    return ""


def _setting_name(stmt: ast.stmt, call: ast.Call) -> str:
    name = ""
    if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
        name = stmt.targets[0].id
    for node in ast.walk(stmt):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and any(n is call for n in ast.walk(value)):
                    return f"{name}[{key.value!r}]" if name else str(key.value)
    return name


def _simple_statements(tree: ast.AST) -> list[ast.stmt]:
    compound = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.Try, ast.With, ast.For, ast.While)
    return sorted((s for s in ast.walk(tree) if isinstance(s, ast.stmt) and not isinstance(s, compound)),
                  key=lambda s: s.lineno)


def settings_reads(root: Path = ROOT) -> dict[str, dict]:
    """{variable: {"reader", "minimum", "defaults": {module: text}, "settings": [...], "meaning"}} in reading order:
    every `env_*("NAME", …)` call of the settings modules and of `config/env.py`."""
    found: dict[str, dict] = {}
    files = [(m, root / "config" / "settings" / f"{m}.py") for m in SETTINGS_MODULES]
    for module, path in [*files, ("env", root / "config" / "env.py")]:
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        statements = _simple_statements(ast.parse(source))
        for stmt in statements:
            for call in ast.walk(stmt):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in READERS
                        and call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
                    continue
                entry = found.setdefault(call.args[0].value, {"reader": call.func.id, "minimum": None, "defaults": {},
                                                              "settings": [], "meaning": ""})
                minimum = next((k.value for k in call.keywords if k.arg == "minimum"), None)
                if minimum is not None:
                    entry["minimum"] = _number(minimum)
                entry["defaults"].setdefault(module, _default(source, call))
                setting = _setting_name(stmt, call)
                if setting and setting not in entry["settings"]:
                    entry["settings"].append(setting)
                entry["meaning"] = entry["meaning"] or _meaning(lines, statements, stmt, call,
                                                                {call.args[0].value, setting})
    return found


def _environ_name(call: ast.AST, constants: dict[str, str]) -> tuple[str, ast.AST | None] | None:
    """("NAME", default node) for `os.environ.get(NAME[, d])`, `os.getenv(NAME[, d])`, `os.environ[NAME]`."""
    if isinstance(call, ast.Call) and call.args:
        func = ast.unparse(call.func)
        if not (func.endswith("environ.get") or func == "os.getenv"):
            return None
        arg, default = call.args[0], (call.args[1] if len(call.args) > 1 else None)
    elif isinstance(call, ast.Subscript) and isinstance(call.ctx, ast.Load) and ast.unparse(call.value) == "os.environ":
        arg, default = call.slice, None
    else:
        return None
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value, default
    if isinstance(arg, ast.Name) and arg.id in constants:
        return constants[arg.id], default
    return None


def code_reads(root: Path = ROOT) -> dict[str, dict]:
    """{variable: {"where": [modules], "default", "meaning"}}: what the code outside the settings reads from the
    environment directly (`os.environ.get`, `os.getenv`, `os.environ[...]`, the name written out or a module
    constant), tests, migrations and `config/` left out."""
    found: dict[str, dict] = {}
    paths = sorted(p for app in APPS for p in (root / app).rglob("*.py") if "migrations" not in p.parts)
    for path in paths:
        source = path.read_text(encoding="utf-8")
        if "environ" not in source and "getenv" not in source:
            continue
        tree = ast.parse(source)
        lines = source.splitlines()
        constants = {t.id: s.value.value for s in tree.body if isinstance(s, ast.Assign)
                     and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)
                     for t in s.targets if isinstance(t, ast.Name)}
        statements = _simple_statements(tree)
        functions = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for stmt in statements:
            for node in ast.walk(stmt):
                read = _environ_name(node, constants)
                if read is None:
                    continue
                name, default = read
                module = path.relative_to(root).with_suffix("").as_posix().replace("/", ".")
                entry = found.setdefault(name, {"where": [], "default": "", "meaning": ""})
                if module not in entry["where"]:
                    entry["where"].append(module)
                if default is not None and not entry["default"]:
                    entry["default"] = _code(ast.get_source_segment(source, default))
                if not entry["meaning"]:
                    entry["meaning"] = _meaning(lines, statements, stmt, node, {name}) or next(
                        (_first_sentence(ast.get_docstring(f) or "") for f in functions
                         if f.lineno <= node.lineno <= f.end_lineno), "")
    return dict(sorted(found.items()))


def settings_table(root: Path = ROOT) -> str:
    rows = ["| variable | read as | default | where it is read | sets | meaning (the code's comment) |",
            "|---|---|---|---|---|---|"]
    for name, e in settings_reads(root).items():
        read = READERS[e["reader"]] + (f", at least {e['minimum']:,}" if e["minimum"] is not None else "")
        defaults = e["defaults"]
        first = "base" if "base" in defaults else next(iter(defaults))
        default = defaults[first]
        where = ", ".join(m if m == first or defaults[m] == default else f"{m} ({defaults[m]})" for m in defaults)
        sets = ", ".join(f"`{s}`" for s in e["settings"]) or "–"
        rows.append(f"| `{name}` | {read} | {default} | {where} | {sets} | {_cell(e['meaning']) or '–'} |")
    rows += ["", "Read by the code itself, outside the settings (operators' paths, library switches, test hooks):", "",
             "| variable | read in | default | meaning (the code's comment) |", "|---|---|---|---|"]
    for name, e in code_reads(root).items():
        rows.append(f"| `{name}` | {', '.join(f'`{w}`' for w in e['where'])} | {e['default'] or '–'} | "
                    f"{_cell(e['meaning']) or '–'} |")
    return "\n".join(rows) + "\n"


def settings_page(root: Path = ROOT) -> str:
    current = (root / "docs" / "reference" / "settings.md").read_text(encoding="utf-8")
    intro = current.split(SETTINGS_MARK, 1)[0].rstrip()
    return (f"{intro}\n\n{SETTINGS_MARK}\n## Every variable\n\nRead from the code: `config/settings/base.py` "
            "(every environment), `local.py` (`manage.py`'s default), `test.py`, `production.py`, and `config/env.py`. "
            "A default shown beside a module is that module's own.\n\n" + settings_table(root))


# --------------------------------------------------------------------------------------------- pages
def pages() -> dict[str, str]:
    return {"docs/reference/cli.md": cli_page(), "docs/reference/endpoints.md": endpoints_page(),
            "docs/reference/settings.md": settings_page()}


def stale(want: dict[str, str] | None = None) -> list[str]:
    want = pages() if want is None else want
    return [f"{p}: differs from what it describes (run scripts/reference_pages.py)" for p, text in want.items()
            if not (ROOT / p).exists() or (ROOT / p).read_text(encoding="utf-8") != text]


def main(argv: list[str]) -> int:
    want = pages()
    if argv == ["--check"]:
        problems = stale(want)
        print("\n".join(problems) or "the reference pages are up to date")
        return 1 if problems else 0
    if argv:
        print("usage: scripts/reference_pages.py [--check]", file=sys.stderr)
        return 2
    for path, text in want.items():
        if not (ROOT / path).exists() or (ROOT / path).read_text(encoding="utf-8") != text:
            (ROOT / path).write_text(text, encoding="utf-8")
            print("written:", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
