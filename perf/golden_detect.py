"""Golden ranked lists of the default detector, so a redesign can show that nothing changed for users.

Runs ``manage.py detect`` (the default method, top 100, explanations as shipped) on two inputs and stores one
digest per query: the Loci Similes 545-pair benchmark (its query segments against its source segments) and Lucan,
Bellum Civile 2-10, against the Aeneid. A query's digest covers its rows ordered by (score rounded to 6 digits,
descending; source id), so reordering among exact ties is not a change; the explanation column is included. The
command runs with PYTHONHASHSEED=0: an explanation lists word pairs of equal weight in set order.

    python -m perf.golden_detect --write   # before a redesign: perf/expected/golden/*.tsv
    python -m perf.golden_detect           # after: exit 1 and name the queries whose lists changed
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = ROOT / "perf" / "expected" / "golden"
SHARED = ROOT.parent / "shared" / "data"


def _write_csv(path: Path, ids: list[str], texts: list[str]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["seg_id", "text"])
        w.writerows(zip(ids, texts))


def _tess(path: Path, books: range | None = None) -> tuple[list[str], list[str]]:
    """``<prefix> book.line<TAB>text`` lines of a Tesserae file, read here so the golden input never moves."""
    ids: list[str] = []
    texts: list[str] = []
    seen: set[str] = set()
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.startswith("<") or ">" not in raw:
            continue
        tag, text = raw[1:].split(">", 1)
        ref = tag.rsplit(" ", 1)[-1]
        if (books is not None and int(ref.split(".")[0]) not in books) or tag.strip() in seen:
            continue  # the file repeats a few ids (luc. 5.595): the first one is the line
        seen.add(tag.strip())
        ids.append(tag.strip())
        texts.append(text.strip())
    return ids, texts


def inputs(tmp: Path) -> dict[str, tuple[Path, Path]]:
    out = {}
    from benchmarks.loci.data import load_default_545  # noqa: E402  (the benchmark as the product reads it)

    bench = load_default_545()
    _write_csv(tmp / "loci_q.csv", [s.seg_id for s in bench.queries], [s.text for s in bench.queries])
    _write_csv(tmp / "loci_s.csv", [s.seg_id for s in bench.sources], [s.text for s in bench.sources])
    out["loci545"] = (tmp / "loci_q.csv", tmp / "loci_s.csv")
    tess = SHARED / "latin_texts" / "tesserae"
    _write_csv(tmp / "luc.csv", *_tess(tess / "lucan.bellum_civile.tess", range(2, 11)))
    _write_csv(tmp / "aen.csv", *_tess(tess / "vergil.aeneid.tess"))
    out["lucan_vergil"] = (tmp / "luc.csv", tmp / "aen.csv")
    return out


def digests(output: Path) -> dict[str, str]:
    per_query: dict[str, list[tuple[float, str, str]]] = {}
    with output.open(encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh):
            per_query.setdefault(r["query_id"], []).append(
                (-round(float(r["score"]), 6), r["source_id"], r.get("explain", "")))
    return {q: hashlib.sha1(repr(sorted(rows)).encode()).hexdigest()[:16] for q, rows in sorted(per_query.items())}


def run(name: str, query: Path, source: Path, tmp: Path) -> dict[str, str]:
    out = tmp / f"{name}.csv"
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # equal-weight word pairs of an explanation follow set order
    subprocess.run([sys.executable, "manage.py", "detect", "--query", str(query), "--source", str(source),
                    "--top-k", "100", "--output", str(out)], cwd=ROOT, check=True, env=env)
    return digests(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="store the digests instead of checking them")
    parser.add_argument("--only", choices=["loci545", "lucan_vergil"], help="one input")
    args = parser.parse_args(argv)
    import django

    sys.path.insert(0, str(ROOT))
    django.setup()
    changed = 0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name, (q, s) in inputs(tmp).items():
            if args.only and name != args.only:
                continue
            got = run(name, q, s, tmp)
            path = EXPECTED / f"{name}.tsv"
            if args.write:
                EXPECTED.mkdir(parents=True, exist_ok=True)
                path.write_text("".join(f"{q}\t{h}\n" for q, h in got.items()), encoding="utf-8")
                print(f"{name}: {len(got)} queries written to {path.relative_to(ROOT)}")
                continue
            want = dict(line.split("\t") for line in path.read_text(encoding="utf-8").split("\n") if line)
            diff = sorted(q for q in set(want) | set(got) if want.get(q) != got.get(q))
            changed += len(diff)
            print(f"{name}: {len(got)} queries, {len(diff)} changed" + (f" (first: {diff[:5]})" if diff else ""))
    return 1 if changed else 0


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    sys.exit(main())
