"""The documentation site (mkdocs.yml, docs/) builds with `--strict` in `make test`: a broken link, a missing
image or a bad anchor fails here. A page that `nav` does not list still builds and is reachable (under "More
pages", scripts/mkdocs_hooks.py), so a page added on any branch needs no edit to mkdocs.yml. Nothing on the built
site is loaded from another host. The README stays a short page whose links all resolve. The results pages
(docs/results/) are what scripts/results_pages.py writes from the stored figures: a stale or typed one fails."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.scripts import load_script

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
    # Every written page has its place in mkdocs.yml's nav (a generated results page may join "Results" unlisted).
    assert "More pages" not in (tmp_path / "site" / "index.html").read_text(encoding="utf-8"), "add it to nav"
    outside = {p.name: OUTSIDE.findall(p.read_text(encoding="utf-8")) for p in pages}
    assert not {name: hits for name, hits in outside.items() if hits}


def _copy_site(tmp_path: Path) -> None:
    """What the docs build reads: the pages, the hooks with the results generator, the stored figures."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    (tmp_path / "scripts").mkdir()
    for script in ("mkdocs_hooks.py", "results_pages.py"):
        shutil.copy(ROOT / "scripts" / script, tmp_path / "scripts")
    shutil.copytree(ROOT / "perf" / "expected", tmp_path / "perf" / "expected")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")


def test_a_page_missing_from_nav_builds_and_is_in_the_menu(tmp_path):
    _copy_site(tmp_path)
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


def _results_pages():
    return load_script("results_pages")


def _leaves(node):
    if isinstance(node, dict):
        for value in node.values():
            yield from _leaves(value)
    elif isinstance(node, list):
        for value in node:
            yield from _leaves(value)
    else:
        yield node


def test_the_results_pages_are_what_the_generator_writes_from_the_stored_figures():
    """docs/results/ holds only pages `scripts/results_pages.py` writes, each equal to what it writes now; every
    figure of every stored file is on its page, in the site's Results section."""
    import yaml

    generator = _results_pages()
    assert generator.stale(ROOT) == [], "run .venv/bin/python scripts/results_pages.py"
    sources = sorted((ROOT / "perf" / "expected").glob("*.yaml"))
    assert sources
    for source in sources:
        page = (ROOT / "docs" / "results" / f"{source.stem}.md").read_text(encoding="utf-8")
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
        figures = [v for v in _leaves(data["figures"]) if isinstance(v, float)]
        assert figures and all(f"| {v!r} |" in page or f"| {v!r}\n" in page for v in figures), source.name
        assert f"`{data['command']}`" in page
    index = (ROOT / "docs" / "results" / "index.md").read_text(encoding="utf-8")
    assert all(f"({s.stem}.md)" in index for s in sources)


def test_a_stale_or_hand_typed_results_page_stops_the_build(tmp_path):
    import yaml

    _copy_site(tmp_path)
    expected = tmp_path / "perf" / "expected" / "suite_short.yaml"
    data = yaml.safe_load(expected.read_text(encoding="utf-8"))
    data["figures"]["loci-similes"]["bm25-lemma"]["R@10"] = 0.1234
    expected.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    proc = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0 and "docs/results/suite_short.md: differs from its source" in proc.stdout + proc.stderr
    # another shape of data file (a list of rows, two levels of figures) renders as well
    (tmp_path / "docs" / "results" / "kernel_speed.yaml").write_text(yaml.safe_dump({
        "name": "kernel speed", "description": "Seconds per run, same-run ratio against bm25s.",
        "command": "perf/kernel_bench.py", "figures": {"fused": {"seconds": 1.75, "ratio": 5.2}},
        "runs": [{"n": 850, "seconds": 1.7, "machine": {"cores": 2}}, {"n": 40000, "seconds": 9.5}]}, sort_keys=False), encoding="utf-8")
    generator = _results_pages()
    assert generator.write(tmp_path)
    assert generator.stale(tmp_path) == []
    proc = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    short = (tmp_path / "site" / "results" / "suite_short.html").read_text(encoding="utf-8")
    assert "<td>0.1234</td>" in short
    speed = (tmp_path / "site" / "results" / "kernel_speed.html").read_text(encoding="utf-8")
    assert all(f"<td>{v}</td>" in speed for v in ("1.75", "5.2", "850", "40000", "9.5"))
    assert "<td>cores: 2</td>" in speed and "<td>–</td>" in speed  # a mapping in a row; a row without it
    assert "Seconds per run" in speed and 'href="kernel_speed.html"' in short  # in the Results menu
    # a page typed by hand in docs/results/ is refused, and so is an edit of a generated one
    (tmp_path / "docs" / "results" / "typed.md").write_text("# Typed\n\nR@10 0.99\n", encoding="utf-8")
    page = tmp_path / "docs" / "results" / "suite_dev.md"
    page.write_text(page.read_text(encoding="utf-8").replace("0.9311", "0.9411"), encoding="utf-8")
    proc = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "docs/results/typed.md: typed by hand" in out
    assert "docs/results/suite_dev.md: differs from its source" in out
