"""What a worker's first detection costs against its second (issue 45: "nothing takes a minute twice").

In a fresh process, as a job process starts: optionally the worker's start-up preloads (``JOB_WORKER_PRELOAD``, what
``jobs.signals.preload_in_job_process`` runs in every job process), then the default detector (``manage.py
detect``, top 100, explanations) on Lucan 2 against Aeneid 1-3, then on other texts of about the same size, Lucan
3 against Aeneid 4-6. Each mode runs in fresh processes, alternating, in the same run, so the ratio compares like
with like.

    .venv/bin/python perf/first_detection.py [--write perf/expected/detection/first_detection.yaml]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
TESS = ROOT.parent / "shared" / "data" / "latin_texts" / "tesserae"


def _child(preload: bool, tmp: Path) -> dict:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.utils.module_loading import import_string

    from perf.golden_detect import _tess, _write_csv

    out = {}
    t = time.perf_counter()
    if preload:
        for path in settings.JOB_WORKER_PRELOAD:
            import_string(path)()
    out["preload s"] = round(time.perf_counter() - t, 2)
    for name, books, aen in (("first", range(2, 3), range(1, 4)), ("second", range(3, 4), range(4, 7))):
        _write_csv(tmp / f"q-{name}.csv", *_tess(TESS / "lucan.bellum_civile.tess", books))
        _write_csv(tmp / f"s-{name}.csv", *_tess(TESS / "vergil.aeneid.tess", aen))
        t = time.perf_counter()
        call_command("detect", "--query", str(tmp / f"q-{name}.csv"), "--source", str(tmp / f"s-{name}.csv"),
                     "--top-k", "100", "--output", str(tmp / f"out-{name}.csv"), stdout=open(os.devnull, "w"),
                     stderr=open(os.devnull, "w"))
        out[f"{name} detection s"] = round(time.perf_counter() - t, 2)
    out["first / second"] = round(out["first detection s"] / out["second detection s"], 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="store the figures as YAML")
    parser.add_argument("--repeat", type=int, default=2, help="processes per mode (default 2)")
    parser.add_argument("--child", choices=["preload", "cold"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(_child(args.child == "preload", Path(tmp))))
        return 0
    figures: dict[str, list] = {"cold": [], "preload": []}
    for _ in range(args.repeat):  # the modes alternate, so a change of load falls on both
        for mode in figures:
            done = subprocess.run([sys.executable, "-m", "perf.first_detection", "--child", mode], cwd=ROOT,
                                  check=True, capture_output=True, text=True)
            figures[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(mode, figures[mode][-1])
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(yaml.safe_dump({
            "title": "A worker's first detection against its second (issue 45)",
            "description": " ".join(__doc__.split("\n\n")[1].split()),
            "command": " ".join([".venv/bin/python perf/first_detection.py", *sys.argv[1:]]),
            "measured": {"date": datetime.date.today().isoformat(), "load_average": round(os.getloadavg()[0], 1)},
            "figures": figures}, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
