"""Take the documentation's screenshots (docs/img/) with Debian's chromium driven by Playwright, from a running
Similia with the demo loaded and its jobs done (`make run`, then wait for the worker):

    .venv/bin/python scripts/docs_screenshots.py [--base-url http://127.0.0.1:8000] [--out docs/img]

Logs in as the README's first user (`lead`) and saves the home page and the demo detection's run page."""
from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8000")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "img")
    parser.add_argument("--user", default="lead")
    parser.add_argument("--password", default="lead-demo-pass")
    o = parser.parse_args()
    from playwright.sync_api import sync_playwright

    base = o.base_url.rstrip("/")
    o.out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        page.goto(f"{base}/login/")
        page.fill("#id_username", o.user)
        page.fill("#id_password", o.password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")
        page.screenshot(path=str(o.out / "home.png"))
        page.goto(f"{base}/workbench/")
        link = page.locator("a[href*='/workbench/runs/']").first
        href = link.get_attribute("href") if link.count() else None
        if href is None or not re.search(r"/workbench/runs/\d+/$", href):
            raise SystemExit(f"no detection run on {base}/workbench/ for {o.user}: load the demo and wait for the worker")
        page.goto(base + href)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(o.out / "workbench.png"))
        browser.close()
    print(f"saved {o.out / 'home.png'} and {o.out / 'workbench.png'}")


if __name__ == "__main__":
    main()
