"""MkDocs hook (`mkdocs.yml`, `hooks:`): a page under docs/ that the `nav` does not list is still in the menu,
under "More pages", so a page added on any branch is reachable without editing `mkdocs.yml`."""

from mkdocs.structure.nav import Navigation, Section

UNLISTED_SECTION = "More pages"


def on_nav(nav, /, *, config, files):
    listed = {page.file.src_uri for page in nav.pages}
    unlisted = sorted(
        (f.page for f in files.documentation_pages() if f.page is not None and f.src_uri not in listed),
        key=lambda page: page.file.src_uri,
    )
    if not unlisted:
        return nav
    section = Section(UNLISTED_SECTION, unlisted)
    for page in unlisted:
        page.parent = section
    pages = [*nav.pages, *unlisted]
    for before, page, after in zip([None, *pages[:-1]], pages, [*pages[1:], None]):
        page.previous_page, page.next_page = before, after
    return Navigation([*nav.items, section], pages)
