"""The two GPU checks of ``perf/gpu_all.sh`` that need code of their own.

    .venv/bin/python perf/gpu_all_steps.py oom --corpus NAME [--fraction 0.02]
    .venv/bin/python perf/gpu_all_steps.py throughput --tokenizer MODEL [--pairs 40000] [--size base]
    .venv/bin/python perf/gpu_all_steps.py worker --corpus NAME [--timeout 50]

- ``oom``: the out-of-memory back-off triggered on purpose: the process may use only ``--fraction`` of the GPU's
  memory (``torch.cuda.set_per_process_memory_fraction``), and a ``base`` pretraining step is asked for with a
  batch that cannot fit; the run must halve its micro-batch (gradients accumulated) until a step fits, and
  finish. Prints and stores the micro-batch it settled on and the log lines of the back-off.
- ``throughput``: reranking pairs/s of a ``--size`` (default ``base``: 12 layers, 768 wide) 3-class
  cross-encoder at 128 tokens (random weights: the speed is what a model of that size costs), fp16/bf16
  autocast on CUDA, batch 512; the goal in issue 28 is ≥ 5,000 pairs/s for base size. The pairs are Loci
  Similes query/source texts, repeated up to ``--pairs``.
- ``worker``: a real Celery worker on the ``gpu`` queue only (``--pool solo``, its own process group, stopped at
  the end) picks up a ``pretrain_encoder`` job queued by ``manage.py pretrain_encoder --job`` (tiny size, 20 steps);
  the database and broker are the settings' (``perf/gpu_all.sh`` gives a fresh SQLite file and the filesystem
  broker). Prints the job's status, queue, device and the worker's log lines for the task.

Writes ``gpu_all_<step>.json`` to ``$OUT`` when that is set. Needs CUDA for ``oom`` (refused without it).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _write(name: str, report: dict) -> None:
    print(json.dumps(report, indent=1), flush=True)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], f"gpu_all_{name}.json").write_text(json.dumps(report, indent=1))


def oom(corpus: str, fraction: float, batch_size: int) -> int:
    import torch

    from detection.methods.semantic.pretrain import PretrainConfig, pretrain

    if not torch.cuda.is_available():
        print("no CUDA device: the out-of-memory back-off is checked on a GPU only")
        return 2
    torch.cuda.set_per_process_memory_fraction(fraction)
    work = Path(tempfile.mkdtemp(prefix="oom_"))
    lines: list[str] = []
    t = time.perf_counter()
    card = pretrain(PretrainConfig(corpus=corpus, size="base", steps=3, batch_size=batch_size, stride=50,
                                   checkpoint_every=3), "oom-base", models_dir=work, log=lines.append)
    backoff = [ln for ln in lines if "out of memory" in ln]
    report = {"memory_fraction": fraction, "total_gib": torch.cuda.get_device_properties(0).total_memory / 2**30,
              "asked_batch": batch_size, "settled_micro_batch": card["micro_batch"], "steps": card["steps"],
              "backoff_log": backoff, "recovered": bool(backoff) and card["steps"] == 3,
              "seconds": time.perf_counter() - t, "device": torch.cuda.get_device_name(0)}
    shutil.rmtree(work, ignore_errors=True)
    _write("oom", report)
    return 0 if report["recovered"] else 1


def throughput(tokenizer: str, pairs: int, size: str, batch_size: int, max_length: int) -> int:
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from benchmarks.loci import data
    from detection.methods.infrastructure import model_store
    from detection.methods.rerank import cross_encoder as CE
    from detection.methods.rerank.neural import pick_device
    from detection.methods.semantic.pretrain import SIZES

    device = pick_device("auto")
    tok = AutoTokenizer.from_pretrained(model_store.resolve(tokenizer))
    shape = SIZES[size]
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(
        vocab_size=len(tok), hidden_size=shape["hidden"], num_hidden_layers=shape["layers"],
        num_attention_heads=shape["heads"], intermediate_size=shape["intermediate"],
        max_position_embeddings=max(max_length, 512), num_labels=3)).to(device).eval()
    bench = data.load_default_545()
    qs = [s.text for s in bench.queries]
    ss = [s.text for s in bench.sources]
    Q = [qs[i % len(qs)] for i in range(pairs)]
    C = [ss[(i * 7) % len(ss)] for i in range(pairs)]
    CE.predict_proba(tok, model, Q[:batch_size], C[:batch_size], batch_size=batch_size, max_length=max_length,
                     device=device)  # warm-up
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t = time.perf_counter()
    probs = CE.predict_proba(tok, model, Q, C, batch_size=batch_size, max_length=max_length, device=device)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t
    report = {"size": size, "shape": shape, "max_length": max_length, "pairs": pairs, "batch_size": batch_size,
              "seconds": seconds, "pairs_per_s": pairs / seconds, "goal_pairs_per_s": 5000,
              "device": torch.cuda.get_device_name(0) if device.startswith("cuda") else "cpu",
              "probabilities_sum_to_one": bool(abs(float(probs.sum(1).mean()) - 1) < 1e-3)}
    _write("throughput", report)
    return 0


def worker(corpus: str, timeout: float) -> int:
    import signal
    import subprocess

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    django.setup()
    from django.core.management import call_command

    from jobs.models import Job

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a `timeout` still stops the worker (finally below)
    root = Path(__file__).resolve().parents[1]
    log = Path(tempfile.mkdtemp(prefix="gpu_worker_")) / "worker.log"
    call_command("migrate", verbosity=0)
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "gpu", "--pool", "solo", "-n",
         "gpu-check@%h", "-l", "info", "--without-gossip", "--without-mingle"], cwd=root,
        env={**os.environ, "SIMILIA_WORKER_PRELOAD": "0"}, stdout=log.open("w"), stderr=subprocess.STDOUT,
        start_new_session=True)
    t = time.perf_counter()
    try:
        call_command("pretrain_encoder", "--corpus", corpus, "--name", "worker-la-tiny", "--size", "tiny",
                     "--max-lines", "2000", "--steps", "20", "--checkpoint-every", "10", "--job")
        job = Job.objects.get(kind="pretrain_encoder")
        while time.perf_counter() - t < timeout and job.status not in ("succeeded", "failed", "cancelled"):
            time.sleep(0.5)
            job.refresh_from_db()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    lines = [ln for ln in log.read_text().splitlines() if "Task " in ln or "ready." in ln]
    report = {"status": job.status, "queue": job.queue, "error": job.error, "seconds": time.perf_counter() - t,
              "result": {k: (job.result or {}).get(k) for k in ("model", "device", "mixed_precision", "steps")},
              "worker_log": lines[:4]}
    _write("worker", report)
    return 0 if job.status == "succeeded" and job.queue == "gpu" else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="step", required=True)
    o = sub.add_parser("oom")
    o.add_argument("--corpus", required=True)
    o.add_argument("--fraction", type=float, default=0.02)
    o.add_argument("--batch-size", type=int, default=1024)
    t = sub.add_parser("throughput")
    t.add_argument("--tokenizer", required=True, help="a model name whose tokenizer to use")
    t.add_argument("--pairs", type=int, default=40_000)
    t.add_argument("--size", default="base")
    t.add_argument("--batch-size", type=int, default=512)
    t.add_argument("--max-length", type=int, default=128)
    w = sub.add_parser("worker")
    w.add_argument("--corpus", required=True)
    w.add_argument("--timeout", type=float, default=50)
    a = p.parse_args(argv)
    import transformers

    transformers.logging.set_verbosity_error()
    if a.step == "oom":
        return oom(a.corpus, a.fraction, a.batch_size)
    if a.step == "worker":
        return worker(a.corpus, a.timeout)
    return throughput(a.tokenizer, a.pairs, a.size, a.batch_size, a.max_length)


if __name__ == "__main__":
    raise SystemExit(main())
