"""CPU (or GPU) cost of Similia's own encoders: pretraining time per step, and encoding speed.

    .venv/bin/python perf/pretrain_bench.py --corpus latin_library --size small --steps 4 \
        [--model similia-la-small] [--threads 1] [--device cpu]

1. **Pretraining step** of the size asked for (random weights, a WordPiece vocabulary trained on the corpus's first
   ``--lines`` lines, blocks of the size's length, the size's batch): our step (the output layer on the masked
   positions only, :func:`detection.methods.semantic.pretrain._step`) against ``BertForMaskedLM.forward`` with labels (the
   output layer on every position), alternated A B A B … in the same run, same batches and masks. Prints seconds
   per step each, and the ratio.
2. **Encoding speed** (``--model NAME``, a model in the models directory): ``dense-encoder`` (mean pooling,
   batch 64, max 128 tokens) over the Loci Similes segments (queries and sources of the 545 pairs), segments/s,
   against ``bm25-lemma`` indexing and searching the same segments in the same run.

``--corpus`` is a stored corpus's name (``SIMILIA_CORPORA_DIR``); ``--model`` a name in ``SIMILIA_MODELS_DIR``.
Writes ``pretrain_bench.json`` to ``$OUT`` when that is set.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _full_head_step(model, inputs, labels, device):
    """The alternative: ``BertForMaskedLM.forward`` with labels (logits at every position)."""
    import torch

    x, y = inputs.to(device), labels.to(device)
    loss = model(input_ids=x, attention_mask=torch.ones_like(x), labels=y).loss
    loss.backward()
    return float(loss.detach())


def bench_steps(*, corpus: str, size: str, steps: int, lines: int, device: str, seed: int = 0) -> dict:
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from detection.methods.rerank import neural
    from detection.methods.semantic import pretrain as PT

    shape = PT.SIZES[size]
    texts = list(PT.training_lines(PT.corpus_path(corpus), max_lines=lines))
    tok = PT.build_tokenizer(texts, vocab_size=shape["vocab_size"], language="la", max_length=shape["max_length"])
    blocks = torch.from_numpy(PT.pack_blocks(tok, texts, shape["max_length"]).astype(np.int64))
    torch.manual_seed(seed)
    model = BertForMaskedLM(BertConfig(vocab_size=len(tok), hidden_size=shape["hidden"],
                                       num_hidden_layers=shape["layers"], num_attention_heads=shape["heads"],
                                       intermediate_size=shape["intermediate"],
                                       max_position_embeddings=shape["max_length"])).to(device).train()
    opt = neural.adamw(model.named_parameters(), 1e-4, 0.01)
    special = [tok.convert_tokens_to_ids(t) for t in PT.SPECIALS]
    bs = shape["batch_size"]
    times = {"ours (masked positions)": [], "BertForMaskedLM.forward (every position)": []}
    for step in range(steps + 1):  # step 0 warms both up and is not counted
        idx = torch.from_numpy(PT._batch_indices(len(blocks), bs, step, seed))
        gen = torch.Generator().manual_seed(step)
        inputs, labels = PT.mask_tokens(blocks[idx], vocab_size=len(tok), mask_id=tok.mask_token_id,
                                        special_ids=special, prob=0.15, generator=gen)
        order = list(times) if step % 2 == 0 else list(times)[::-1]
        for name in order:
            t = time.perf_counter()
            if name.startswith("ours"):
                PT._step(model, inputs, labels, bs, device, False, None)
            else:
                _full_head_step(model, inputs, labels, device)
            opt.zero_grad(set_to_none=True)  # both measured without the optimizer update (the same for both)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            if step:
                times[name].append(time.perf_counter() - t)
    out = {name: float(np.median(v)) for name, v in times.items()}
    names = list(times)
    return {"size": size, "shape": shape, "batch_tokens": bs * shape["max_length"], "steps_timed": steps,
            "seconds_per_step_median": out, "ratio_full_over_ours": out[names[1]] / out[names[0]],
            "parameters": int(sum(p.numel() for p in model.parameters())), "device": device}


def bench_encode(*, model: str, device: str) -> dict:
    from benchmarks.loci import data
    from detection.methods import registry

    bench = data.load_default_545()
    texts = [s.text for s in bench.queries] + [s.text for s in bench.sources]
    ids = [f"t{i}" for i in range(len(texts))]
    enc = registry.build("dense-encoder", {"model": model, "device": device, "batch_size": 64})
    t = time.perf_counter()
    enc.fit(ids, texts)
    enc_s = time.perf_counter() - t
    bm = registry.build("bm25-lemma", {})
    t = time.perf_counter()
    bm.fit(ids, texts).search(texts, 10)
    bm_s = time.perf_counter() - t
    return {"segments": len(texts), "dense_encoder_segments_per_s": len(texts) / enc_s,
            "bm25_lemma_fit_and_search_segments_per_s": len(texts) / bm_s, "ratio_bm25_over_encoder": enc_s / bm_s,
            "model": model, "device": device}


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", default="latin_library")
    p.add_argument("--size", default="small")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--lines", type=int, default=4000, help="corpus lines for the benchmark's vocabulary and blocks")
    p.add_argument("--model", default=None, help="a pretrained model's name: also measure encoding speed")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    a = p.parse_args(argv)
    import torch
    import transformers

    torch.set_num_threads(a.threads)
    transformers.logging.set_verbosity_error()
    report = {"threads": a.threads, "torch": torch.__version__,
              "step": bench_steps(corpus=a.corpus, size=a.size, steps=a.steps, lines=a.lines, device=a.device)}
    st = report["step"]
    for name, sec in st["seconds_per_step_median"].items():
        print(f"{a.size} pretraining step ({st['batch_tokens']} tokens, {a.threads} thread(s), {a.device}): "
              f"{sec:.2f} s  {name}")
    print(f"ratio every-position / masked-positions: {st['ratio_full_over_ours']:.2f}x")
    if a.model:
        report["encode"] = e = bench_encode(model=a.model, device=a.device)
        print(f"encode {e['segments']} Loci Similes segments: dense-encoder {a.model} "
              f"{e['dense_encoder_segments_per_s']:.1f} segments/s; bm25-lemma fit+search "
              f"{e['bm25_lemma_fit_and_search_segments_per_s']:.1f} segments/s "
              f"(bm25-lemma {e['ratio_bm25_over_encoder']:.1f}x faster)")
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "pretrain_bench.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
