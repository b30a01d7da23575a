"""Re-run every stored expected result (``perf/expected/*.yaml``) and fail on drift; prints each file's time.

    .venv/bin/python perf/suite_check.py [perf/expected/suite_dev.yaml ...]
    .venv/bin/python perf/suite_check.py --write-results docs/results/benchmark_suite.yaml   (no re-run)

Each file names the command that produced it, its figures, a tolerance and the machine and libraries it was
measured with; the test suite re-runs only ``suite_short.yaml``. Exit status 1 when any figure moved.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.suite import expected as E  # noqa: E402

PERF_CHECK: list[str] = []  # `python -m perf check` (make perf): every stored expected result, about 500 s


def main(argv: list[str]) -> int:
    expected_dir = Path(__file__).parent / "expected"
    if argv[:1] == ["--write-results"]:  # the figures the docs quote, rounded, as data (docs/results/…)
        target = Path(argv[1]) if len(argv) > 1 else Path("docs/results/benchmark_suite.yaml")
        target.write_text(E.render_results(E.results_data(sorted(expected_dir.glob("*.yaml")))), encoding="utf-8")
        print(f"wrote {target}")
        return 0
    files = [Path(a) for a in argv] or sorted(expected_dir.glob("*.yaml"))
    bad = 0
    for f in files:
        spec = E.load(f)
        t = time.perf_counter()
        report = E.run_expected(spec, progress=lambda m: print(f"  {m}", flush=True))
        problems = E.drift(spec, report)
        print(f"{f.name}: {len(problems)} drifted figures, {time.perf_counter() - t:.1f} s "
              f"(stored run: {spec.get('measured', {}).get('seconds')} s)")
        for p in problems:
            print(f"  DRIFT {p}")
        bad += bool(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
