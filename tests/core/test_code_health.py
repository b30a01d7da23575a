"""Code-health guards that run with the suite (so CI enforces them): ruff (pyflakes, syntax, import order;
ruff.toml) and the import contracts (.importlinter: the pure packages never import Django; annotation and
detection never import benchmarks). Fix import order with `.venv/bin/python -m ruff check --fix .`."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(args):
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_ruff_finds_nothing():
    proc = _run([sys.executable, "-m", "ruff", "check", "--no-cache", "."])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_import_contracts_are_kept():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    proc = _run([lint_imports, "--no-cache"])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " 0 broken" in proc.stdout


def test_no_import_cycles_in_the_whole_tree():
    """Every first-party package (each top-level folder with an ``__init__.py``), every import (module level or
    inside a function): no module reaches itself. A cycle is listed by its modules; break it by moving the shared
    part to the lower module, keeping its name importable where callers import it."""
    import grimp

    packages = sorted(p.parent.name for p in ROOT.glob("*/__init__.py"))
    assert {"core", "detection", "tests"} <= set(packages)
    graph = grimp.build_graph(*packages)
    cycles = sorted({tuple(sorted({importer, *chain}))
                     for importer in graph.modules for imported in graph.find_modules_directly_imported_by(importer)
                     if (chain := graph.find_shortest_chain(importer=imported, imported=importer))})
    assert not cycles, "\n".join(" ↔ ".join(cycle) for cycle in cycles)


def test_models_and_migrations_agree():
    """`makemigrations --check`: every model change has its migration."""
    proc = _run([sys.executable, "manage.py", "makemigrations", "--check", "--dry-run"])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


# A module's file name says what it holds, so a name repeats across packages only for a reason (issue 11;
# the rule is written in docs/ARCHITECTURE.md, "Module names"). Checked: every .py file git tracks or would add, outside tests/ and
# migrations/. Not checked: __init__.py, and management/commands/*.py (a command's file name is its command name).

# Django's and the layout's role names: one per app, at the app's top (`annotation/models.py`), the app says whose
# (docs/ARCHITECTURE.md, "Django wrappers"); deeper down (`workbench/engine/models.py`) they count as repeats.
_ROLE_NAMES = frozenset({"admin.py", "api.py", "apps.py", "demo.py", "jobs.py", "models.py", "page_urls.py",
                         "selectors.py", "services.py", "urls.py", "views.py"})

# Deliberately parallel modules: the same kind of thing once per language, benchmark, app or layer; the packages
# named are the only ones that may hold the name. Anything else repeated is renamed to say what it holds.
_PARALLEL = {
    # one per benchmark: its scores, its evaluation driver, its charts
    "metrics.py": {"benchmarks/loci", "benchmarks/greek_sts"},
    "evaluate.py": {"benchmarks/loci", "benchmarks/greek_sts"},
    "plots.py": {"benchmarks/loci", "benchmarks/greek_sts"},
    # one per language, one API (`lemma`, `lemmatize`)
    "lemmatize.py": {"detection/latin", "detection/greek"},
    # one per layer of one subject: the project services (writes) and the project pages (views)
    "projects.py": {"annotation/services", "annotation/views"},
    # each package's exception classes: the base DomainError, the annotation rules' errors, the Latin input errors
    "errors.py": {"core", "annotation/services", "detection/latin"},
    # each package's registry of what it runs: job kinds (jobs) and text-pair methods (detection/methods)
    "registry.py": {"jobs", "detection/methods"},
    # each app's report exports (JSON/CSV) shared by its API and pages
    "exports.py": {"benchmarks", "workbench"},
    # core's CommandError conversion for manage.py; detection's command line (detect, build_corpus), above its methods
    "commands.py": {"core", "detection"},
}


def _modules_by_name() -> dict[str, list[str]]:
    tracked = _run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"]).stdout.split()
    by_name: dict[str, list[str]] = {}
    for path in tracked:
        parts = Path(path).parts
        if parts[0] == "tests" or "migrations" in parts or parts[-1] == "__init__.py" or "commands" in parts[:-1]:
            continue
        by_name.setdefault(parts[-1], []).append(path)
    return by_name


def test_module_names_are_not_repeated_across_packages_without_reason():
    by_name = _modules_by_name()
    repeated = {name: paths for name, paths in by_name.items() if len(paths) > 1 and not (
        name in _ROLE_NAMES and all(len(Path(p).parts) == 2 for p in paths))}
    unexplained = {name: paths for name, paths in repeated.items()
                   if name not in _PARALLEL or {str(Path(p).parent) for p in paths} - _PARALLEL[name]}
    assert not unexplained, f"rename these to say what they hold, or add them to _PARALLEL with why: {unexplained}"
    stale = sorted(set(_PARALLEL) - set(repeated))
    assert not stale, f"no longer repeated, take them out of _PARALLEL: {stale}"
    assert by_name["cli.py"] == ["core/cli.py"]  # the one command-line convention (the packages' own: *_commands.py)


# docs/ARCHITECTURE.md lists every module that exists (issue 11), so a newcomer finds each one from there.
_APPS = ("annotation", "benchmarks", "config", "core", "detection", "frontend", "jobs", "workbench")


def _doc_entries(text: str) -> list[str]:
    """The doc's bullets, numbered steps and paragraphs, each with its continuation lines joined."""
    entries: list[list[str]] = []
    for line in text.splitlines():
        if not entries or not line.strip() or re.match(r"\s*(- |\d+\. |#)", line):
            entries.append([])
        entries[-1].append(line.strip())
    return [" ".join(entry) for entry in entries if entry]


def _code_spans(entry: str) -> set[str]:
    """What an entry writes in backticks, with `{a,b}` alternatives expanded (`config/settings/{base,test}.py`)."""
    spans = set()
    for span in re.findall(r"`([^`]+)`", entry):
        match = re.search(r"\{([^{}]+)\}", span)
        options = match.group(1).split(",") if match else [""]
        spans.update(span[:match.start()] + o.strip() + span[match.end():] if match else span for o in options)
    return spans


def _is_listed(path: Path, text: str, entries: list[tuple[str, set[str]]]) -> bool:
    """Named in full (path or dotted), or named relative to an ancestor package in an entry that names that
    package (`annotation/` ... `views/lead.py`); a command by its name; an app's role module by its name."""
    dotted = ".".join(path.with_suffix("").parts)
    if str(path) in text or re.search(r"(?<![\w.])" + re.escape(dotted) + r"\b", text):
        return True
    if any(str(path) in spans for _, spans in entries):  # written with {a,b} alternatives
        return True
    if "commands" in path.parts[:-1] or (len(path.parts) == 2 and path.name in _ROLE_NAMES):
        return any(path.stem in spans or path.name in spans for _, spans in entries)
    for depth in range(1, len(path.parts)):
        package = "/".join(path.parts[:depth]) + "/"
        relative = "/".join(path.parts[depth:])
        for _, spans in entries:
            if any(s.startswith(package) for s in spans) and {relative, relative[:-3]} & spans:
                return True
    return False


def test_architecture_doc_lists_every_module():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    entries = [(entry, _code_spans(entry)) for entry in _doc_entries(text)]
    paths = [Path(p) for names in _modules_by_name().values() for p in names if Path(p).parts[0] in _APPS]
    unlisted = sorted(str(p) for p in paths if not _is_listed(p, text, entries))
    assert not unlisted, f"say in docs/ARCHITECTURE.md what these hold: {unlisted}"
