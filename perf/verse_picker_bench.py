"""The project page with the verse picker against the page with the old drop-down of every verse, measured in the
same run; and the picker's search requests.

Usage: .venv/bin/python perf/verse_picker_bench.py [--pages 20] [--base REV | --no-base]

A project holding the DBBE verse sample (1,388 verses, ../shared/data/dbbe/dbbe_verses_sample.csv) and one batch,
on a throw-away test database (perf/_testdb.py); its lead fetches the project page --pages times (Django test
client, in process). The base revision (default 215ea2c, the code before the picker, whose page lists every verse
in a <select>) runs the same measurement in a subprocess in a temporary `git worktree` first; the ratio base/this
is printed. This checkout also times `GET /api/v1/projects/<id>/verses/search/` for a few queries (20 a page).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "perf"))

from _annotation_http import load_average, measured_in, trees  # noqa: E402

BEFORE = "215ea2c"
QUERIES = ["16923", "καὶ", "ζ", "γραματα", "no such verse"]


def measure(pages: int) -> dict:
    """Run in the tree being measured (cwd; PYTHONPATH points there too)."""
    sys.path.insert(0, os.getcwd())
    sys.path.append(str(ROOT))
    from _testdb import throwaway_database

    with throwaway_database():
        from django.test import Client

        from annotation.models import Verse
        from annotation.services.projects import batch_create, project_create, verses_import
        from core.paths import shared_data_dir
        from core.services import user_create_or_update

        lead, _ = user_create_or_update(username="perflead", password="pw-perflead", roles=("lead",))
        project = project_create(owner=lead, name="picker-bench")
        sample = shared_data_dir() / "dbbe" / "dbbe_verses_sample.csv"
        verses_import(project=project, data=sample.read_bytes(), filename=sample.name, create_batches=False)
        ids = list(Verse.objects.filter(project=project).order_by("id").values_list("verse_id", flat=True)[:4])
        batch_create(project=project, reference_id=ids[0], candidate_ids=ids[1:])
        client = Client()
        client.force_login(lead)
        url = f"/projects/{project.pk}/"
        times, size = [], 0
        for _ in range(pages + 1):
            t = time.perf_counter()
            response = client.get(url)
            times.append(time.perf_counter() - t)
            assert response.status_code == 200
            size = len(response.content)
        out = {"verses": Verse.objects.filter(project=project).count(), "page_ms": statistics.median(times[1:]) * 1000,
               "page_bytes": size, "load": load_average()}
        search = f"/api/v1/projects/{project.pk}/verses/search/"
        if client.get(search).status_code == 200:  # this checkout only
            out["search"] = {}
            for q in QUERIES:
                runs = []
                for _ in range(10):
                    t = time.perf_counter()
                    body = client.get(search, {"q": q, "page_size": 20}).json()
                    runs.append(time.perf_counter() - t)
                out["search"][q] = {"ms": statistics.median(runs) * 1000, "count": body["count"]}
        return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--base", default=BEFORE, help=f"git revision measured first, the old way (default {BEFORE})")
    parser.add_argument("--no-base", action="store_true", help="measure this checkout only")
    parser.add_argument("--measure-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_only:
        print("RESULT " + json.dumps(measure(args.pages)))
        return
    sys.path.insert(0, str(ROOT))
    from core.paths import SHARED_DATA_ENV, shared_data_dir

    shared = str(shared_data_dir())  # the base tree sits in a temporary folder: it reads this checkout's data
    results = {}
    with trees(None if args.no_base else args.base) as sources:
        for label, tree in sources:
            results[label] = measured_in(tree, "verse_picker_bench.py", ["--pages", str(args.pages)], label,
                                         {SHARED_DATA_ENV: shared})
    for label, r in results.items():
        print(f"{label} ({r['load']}): project page with {r['verses']} verses: median {r['page_ms']:.1f} ms, "
              f"{r['page_bytes'] / 1024:.0f} KiB")
        for q, s in r.get("search", {}).items():
            print(f"  search {q!r}: median {s['ms']:.1f} ms, {s['count']} match(es), first 20 returned")
    if len(results) == 2:
        (base_label, old), (_, new) = results.items()
        print(f"ratio {base_label} / this checkout: project page {old['page_ms'] / new['page_ms']:.2f}x time, "
              f"{old['page_bytes'] / new['page_bytes']:.2f}x bytes")


if __name__ == "__main__":
    main()
