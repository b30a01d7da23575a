"""The documentation site (mkdocs.yml, docs/) builds with `--strict` in `make test`: a broken link, a missing
image or a bad anchor fails here. A page that `nav` does not list still builds and is reachable (under "More
pages", scripts/mkdocs_hooks.py), so a page added on any branch needs no edit to mkdocs.yml. Nothing on the built
site is loaded from another host. The README stays a short page whose links all resolve."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE = re.compile(r"""<(?:script|img|link|iframe|source)\b[^>]*\b(?:src|href)=["'](?:https?:)?//""", re.I)


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], cwd=config.parent, capture_output=True, text=True, timeout=300)


def test_the_site_builds_strict_and_loads_nothing_from_outside(tmp_path):
    proc = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    pages = list((tmp_path / "site").rglob("*.html"))
    for page in ("index.html", "getting-started/annotator.html", "architecture_overview.html", "reference/api.html",
                 "ARCHITECTURE.html"):
        assert (tmp_path / "site" / page).exists(), page
    assert (tmp_path / "site" / "img" / "workbench.png").stat().st_size > 10_000  # the README's screenshot
    outside = {p.name: OUTSIDE.findall(p.read_text(encoding="utf-8")) for p in pages}
    assert not {name: hits for name, hits in outside.items() if hits}


def test_a_page_missing_from_nav_builds_and_is_in_the_menu(tmp_path):
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "mkdocs_hooks.py", tmp_path / "scripts")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    (tmp_path / "docs" / "zz_new_topic.md").write_text("# A page from another branch\n\nSee [home](index.md).\n")
    proc = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    home = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "More pages" in home and 'href="zz_new_topic.html"' in home
    # and a broken link on such a page still fails the build
    (tmp_path / "docs" / "zz_new_topic.md").write_text("# Broken\n\nSee [gone](no_such_page.md).\n")
    proc = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0 and "no_such_page.md" in proc.stdout + proc.stderr


def test_the_readme_is_short_and_its_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 60, "the README fits one or two screens; details go to docs/"
    assert "make run" in text and "make test" in text and "PORT" in text
    from core.demo import DEMO_USERS

    for username, password, _roles, _staff in DEMO_USERS:
        assert username in text and password in text, username
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    assert targets
    missing = [t for t in targets if "://" not in t and not (ROOT / t).exists()]
    assert not missing, missing
