"""Read Similia's exports back with the `locisimiles` package (2.1.3) itself, and run its evaluator on them.

    .venv/bin/python scripts/check_locisimiles_roundtrip.py [--venv /tmp/lsv] [--out DIR]

Run by hand (not in `make test`: the package is not one of our requirements; its full install is ~2 GB).

1. A scratch virtual environment (``--venv``, default ``/tmp/lsv``; made when missing, never our ``.venv``) gets
   ``pandas`` and ``numpy`` and ``locisimiles==2.1.3 --no-deps`` from PyPI: the reading modules (``document``,
   ``ground_truth``, ``pipeline/_types``, ``evaluator``) need nothing else. The package's ``__init__`` files
   import torch, transformers and chromadb, so the reader loads those module files without running them
   (empty package modules with the right ``__path__``); ``TwoStagePipeline``, which the evaluator imports by
   name and only uses in its examples, is a placeholder that refuses to be built.
2. In a throwaway database (``perf/_testdb.py``) our side uploads the package's example texts
   (``data/locisimiles/package_examples``), runs a workbench detection (``bm25-lemma`` top 3 + the
   ``lexical-rule`` reranker, thresholds 0.2, in 3 shards), records verdicts (every labelled candidate that is
   in the package's ``ground_truth.csv`` confirmed, the others rejected), evaluates ``bm25-lemma`` on the
   545-pair Loci Similes benchmark and writes the exports as the API gives them: ``results.csv``,
   ``results.locisimiles.json``, ``verdicts.csv``, the Loci run's ``per_pair.csv``.
3. The package reads them: ``Document`` (the uploaded texts), ``GroundTruth`` (``verdicts.csv``, the Loci
   ``per_pair.csv`` and its own ``ground_truth.csv``), ``CandidateJudge`` rows rebuilt from our
   ``results_to_json`` file, and ``IntertextEvaluator`` on them against its ground truth at our threshold.
4. This script compares what the package read and counted with what our database holds, and exits 1 on any
   difference.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "data" / "locisimiles" / "package_examples"
PACKAGE = "locisimiles==2.1.3"
THRESHOLD = 0.2


# ------------------------------------------------------------------------------------- the package's side
def read_back(out: Path) -> dict:
    """Runs in the scratch venv: the package's own classes read our files."""
    import importlib
    import importlib.metadata
    import importlib.util
    import types

    spec = importlib.util.find_spec("locisimiles")
    base = Path(spec.submodule_search_locations[0])
    for name, folder in (("locisimiles", base), ("locisimiles.pipeline", base / "pipeline"),
                         ("locisimiles.pipeline.generator", base / "pipeline" / "generator"),
                         ("locisimiles.pipeline.judge", base / "pipeline" / "judge")):
        module = types.ModuleType(name)  # the package without its __init__ (torch, transformers, chromadb)
        module.__path__ = [str(folder)]
        sys.modules[name] = module
    types_ = importlib.import_module("locisimiles.pipeline._types")
    pipeline_mod = importlib.import_module("locisimiles.pipeline.pipeline")

    class TwoStagePipeline:  # imported by name by the evaluator, used only in its examples
        def __init__(self, *args, **kwargs):
            raise ImportError("TwoStagePipeline needs the package's full install (torch, chromadb)")

    pipe = sys.modules["locisimiles.pipeline"]
    pipe.CandidateJudge, pipe.CandidateJudgeOutput = types_.CandidateJudge, types_.CandidateJudgeOutput
    pipe.Pipeline, pipe.TwoStagePipeline = pipeline_mod.Pipeline, TwoStagePipeline
    from locisimiles.document import Document, TextSegment
    from locisimiles.evaluator import IntertextEvaluator
    from locisimiles.ground_truth import GroundTruth

    query = Document(out / "hieronymus_samples.csv")
    source = Document(out / "vergil_samples.csv")
    data = json.loads((out / "results.locisimiles.json").read_text(encoding="utf-8"))
    predictions = {qid: [types_.CandidateJudge(segment=TextSegment(m["source_text"], m["source_id"]),
                                               candidate_score=m["candidate_score"],
                                               judgment_score=m["judgment_score"],
                                               predicted_class_id=m.get("predicted_class_id"),
                                               predicted_label=m.get("predicted_label"),
                                               class_probabilities=m.get("class_probabilities"))
                         for m in matches] for qid, matches in data.items()}

    class Replay:  # our exported results as the pipeline the evaluator runs
        def run(self, *, query, source, top_k):
            return predictions

    def evaluated(truth):
        ev = IntertextEvaluator(query_doc=query, source_doc=source, ground_truth=truth, pipeline=Replay(),
                                top_k=len(source.ids()), threshold=THRESHOLD)
        per_query = {r["query_id"]: [int(r["tp"]), int(r["fp"]), int(r["fn"])]
                     for r in ev.evaluate_all_queries().to_dict(orient="records")}
        return {"per_query": per_query, "macro": {k: float(v) for k, v in ev.evaluate(average="macro").iloc[0].items()}}

    verdicts = GroundTruth(out / "verdicts.csv")
    loci_gold = GroundTruth(out / "per_pair.csv")
    return {
        "package": "locisimiles " + importlib.metadata.version("locisimiles"),
        "documents": {"query": len(query), "source": len(source), "query_ids": [str(i) for i in query.ids()]},
        "results_pairs": sorted([q, str(j.segment.id), round(j.judgment_score, 6)]
                                for q, lst in predictions.items() for j in lst),
        "verdicts": sorted([e.query_id, e.source_id, e.label] for e in verdicts),
        "loci_gold": sorted({(e.query_id, e.source_id) for e in loci_gold}),
        "loci_labels": sorted({str(e.label) for e in loci_gold}),
        "vs_package_truth": evaluated(GroundTruth(EXAMPLES / "ground_truth.csv")),
        "vs_our_verdicts": evaluated(verdicts),
    }


# -------------------------------------------------------------------------------------------- our side
def export_ours(out: Path) -> dict:
    """Detect, verify and evaluate in a throwaway database; write the exports; return what the DB holds."""
    sys.path.insert(0, str(ROOT / "perf"))
    from _testdb import throwaway_database

    with throwaway_database():
        from rest_framework.test import APIClient

        from benchmarks.exports import loci_csv
        from benchmarks.services import benchmark_import_545, evaluation_run_create
        from core.roles import RESEARCHER
        from core.services import user_create_or_update
        from jobs.models import Job
        from jobs.runner import run_job
        from workbench.models import Candidate, Verdict
        from workbench.services import detection_run_create, document_upload, verdict_set

        user, _ = user_create_or_update(username="roundtrip", password="roundtrip-pass", roles=(RESEARCHER,))
        docs = {}
        for name in ("hieronymus_samples.csv", "vergil_samples.csv"):
            data = (EXAMPLES / name).read_bytes()
            (out / name).write_bytes(data)
            docs[name] = document_upload(name=name, data=data, owner=user)
        run = detection_run_create(query_document=docs["hieronymus_samples.csv"],
                                   source_document=docs["vergil_samples.csv"], retriever="bm25-lemma", top_k=3,
                                   reranker="lexical-rule", thresholds={"cit.": THRESHOLD, "cf.": THRESHOLD},
                                   shards=3, owner=user)
        job = Job.objects.get(pk=run.job_id)  # the test settings run jobs eagerly, shards included
        assert job.status == "succeeded" and job.result["shards"] == 3, (job.status, job.error)
        truth = {(r["query_id"], r["source_id"]) for r in csv.DictReader(io.StringIO(
            (EXAMPLES / "ground_truth.csv").read_text(encoding="utf-8"))) if r["label"] == "1"}
        cands = list(Candidate.objects.filter(run=run).select_related("query", "source").order_by("query_position",
                                                                                                   "rank"))
        for c in cands:
            if c.label:
                verdict_set(candidate=c, user=user, decision=c.label if (c.query.seg_id, c.source.seg_id) in truth
                            else "rejected")
        unsure = next(c for c in cands if not c.label)
        verdict_set(candidate=unsure, user=user, decision="unsure", note="read again")
        client = APIClient()
        client.force_authenticate(user)
        for what, fmt, name in (("results", "csv", "results.csv"), ("results", "locisimiles", "results.locisimiles.json"),
                                ("verdicts", "csv", "verdicts.csv")):
            response = client.get(f"/api/v1/workbench/runs/{run.pk}/export/?what={what}&as={fmt}")
            assert response.status_code == 200, response.content[:300]
            (out / name).write_bytes(response.content)
        version, _ = benchmark_import_545(with_text_path=ROOT / "data" / "locisimiles" / "pairs_545_with_text.csv",
                                          ref_type_path=ROOT / "data" / "locisimiles" / "pairs_545_ref_type.csv")
        loci = evaluation_run_create(version=version, method="bm25-lemma", ks=[1, 10], shards=1, enqueue=False)
        assert run_job(loci.job_id) == "succeeded"
        loci.refresh_from_db()
        (out / "per_pair.csv").write_text(loci_csv(loci, "per_pair"), encoding="utf-8")

        labelled = {(c.query.seg_id, c.source.seg_id) for c in cands if c.label}
        per_query = {}
        for qid in [q for q, _ in docs["hieronymus_samples.csv"].segments.values_list("seg_id", "position")]:
            gold = {s for q, s in truth if q == qid}
            found = {s for q, s in labelled if q == qid}
            per_query[qid] = [len(found & gold), len(found - gold), len(gold - found)]
        return {
            "results_pairs": sorted([c.query.seg_id, c.source.seg_id, round(max(c.p_cit, c.p_cf), 6)] for c in cands),
            "verdicts": sorted([v.candidate.query.seg_id, v.candidate.source.seg_id, int(v.decision != "rejected")]
                               for v in Verdict.objects.filter(candidate__run=run).exclude(decision="unsure")
                               .select_related("candidate__query", "candidate__source")),
            "loci_gold": sorted({(q, s) for q, s in version.gold.values_list("query__seg_id", "source__seg_id")}),
            "per_query_vs_package_truth": per_query,
            "query_ids": list(docs["hieronymus_samples.csv"].segments.order_by("position").values_list("seg_id",
                                                                                                       flat=True)),
        }


def ensure_venv(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "pandas", "numpy"], check=True)
    if subprocess.run([str(python), "-c", "import locisimiles.document"], capture_output=True).returncode:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", PACKAGE], check=True)
    return python


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", type=Path, default=Path("/tmp/lsv"))
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--read", type=Path, default=None, help=argparse.SUPPRESS)  # the scratch venv's half
    args = ap.parse_args()
    if args.read:
        print(json.dumps(read_back(args.read)))
        return 0
    out = args.out or Path(tempfile.mkdtemp(prefix="similia-locisimiles-"))
    out.mkdir(parents=True, exist_ok=True)
    python = ensure_venv(args.venv)
    ours = export_ours(out)
    proc = subprocess.run([str(python), __file__, "--read", str(out)], capture_output=True, text=True)
    if proc.returncode:
        print(proc.stderr[-4000:])
        return 1
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    if theirs["vs_package_truth"]["per_query"] != ours["per_query_vs_package_truth"]:
        print("per-query TP/FP/FN, the package's then ours:", theirs["vs_package_truth"]["per_query"],
              ours["per_query_vs_package_truth"], sep="\n")
    checks = {
        "Document read our uploaded query text (ids in order)": theirs["documents"]["query_ids"] == ours["query_ids"],
        "results.locisimiles.json: every pair and judgment score": theirs["results_pairs"] == ours["results_pairs"],
        "GroundTruth read verdicts.csv (1 confirmed, 0 rejected; integer labels)": theirs["verdicts"] == ours["verdicts"],
        "GroundTruth read the Loci run's per_pair.csv (the version's gold pairs, labels cit./cf.)":
            [tuple(p) for p in theirs["loci_gold"]] == ours["loci_gold"] and theirs["loci_labels"] == ["cf.", "cit."],
        "IntertextEvaluator's per-query TP/FP/FN = ours":
            theirs["vs_package_truth"]["per_query"] == ours["per_query_vs_package_truth"],
    }
    print(f"{theirs['package']} read the exports in {out}")
    print(f"  documents: {theirs['documents']['query']} query and {theirs['documents']['source']} source segments; "
          f"{len(theirs['results_pairs'])} result pairs, {len(theirs['verdicts'])} verdicts, "
          f"{len(theirs['loci_gold'])} Loci gold pairs")
    for name, metrics in (("package's ground_truth.csv", theirs["vs_package_truth"]["macro"]),
                          ("our verdicts", theirs["vs_our_verdicts"]["macro"])):
        print(f"  its evaluator vs {name} at threshold {THRESHOLD}: " + ", ".join(
            f"{k} {metrics[k]:.3f}" for k in ("precision", "recall", "f1", "smr")) +
            f" (tp {metrics['tp']}, fp {metrics['fp']}, fn {metrics['fn']})")
    for name, ok in checks.items():
        print(f"  {'ok  ' if ok else 'FAIL'} {name}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
