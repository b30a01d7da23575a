"""MkDocs hooks (`mkdocs.yml`, `hooks:`).

- A page under docs/ that the `nav` does not list is still in the menu, under "More pages", so a page added on
  any branch is reachable without editing `mkdocs.yml`; an unlisted results page (`docs/results/`) joins the
  section that lists the results index instead.
- The results pages must be what `scripts/results_pages.py` writes from the stored figures: a stale or
  hand-typed one stops the build, naming the page and the command that rewrites it.
"""

import importlib.util
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.nav import Navigation, Section

UNLISTED_SECTION = "More pages"
RESULTS_PREFIX = "results/"


def _results_pages_module():
    spec = importlib.util.spec_from_file_location("results_pages", Path(__file__).with_name("results_pages.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on_pre_build(config):
    problems = _results_pages_module().stale(Path(config.config_file_path).resolve().parent)
    if problems:
        raise PluginError("results pages out of date with their data files:\n  " + "\n  ".join(problems))


def _section_of(items, src_uri: str):
    for item in items:
        if isinstance(item, Section):
            if any(getattr(child, "file", None) is not None and child.file.src_uri == src_uri
                   for child in item.children):
                return item
            found = _section_of(item.children, src_uri)
            if found is not None:
                return found
    return None


def on_nav(nav, /, *, config, files):
    listed = {page.file.src_uri for page in nav.pages}
    unlisted = sorted(
        (f.page for f in files.documentation_pages() if f.page is not None and f.src_uri not in listed),
        key=lambda page: page.file.src_uri,
    )
    if not unlisted:
        return nav
    results = _section_of(nav.items, RESULTS_PREFIX + "index.md")
    to_results = [p for p in unlisted if results is not None and p.file.src_uri.startswith(RESULTS_PREFIX)]
    rest = [p for p in unlisted if p not in to_results]
    for page in to_results:
        page.parent = results
        results.children.append(page)
    items = list(nav.items)
    if rest:
        section = Section(UNLISTED_SECTION, rest)
        for page in rest:
            page.parent = section
        items.append(section)
    pages = _in_menu_order(items)
    for before, page, after in zip([None, *pages[:-1]], pages, [*pages[1:], None]):
        page.previous_page, page.next_page = before, after
    return Navigation(items, pages)


def _in_menu_order(items) -> list:
    out = []
    for item in items:
        if isinstance(item, Section):
            out += _in_menu_order(item.children)
        elif getattr(item, "file", None) is not None:
            out.append(item)
    return out
