"""Demo data of the detection app: small word-vector models trained at demo load from the shipped texts.

The full models (``la-lemma-cbow200`` from The Latin Library, ``grc-lemma-cbow200`` from the Tesserae Greek
texts) are trained with ``manage.py train_embeddings`` and stay out of git. So that the semantic methods run in
a fresh demo without ../shared, the loader trains two tiny ones (a few seconds, < 1 MB each) on the texts in
``data/``: ``la-lemma-demo`` (the 545 Loci Similes pairs' Latin) and ``grc-lemma-demo`` (the 296 DBBE verse
pairs). They are far too small to help retrieval; they make the methods runnable, nothing more.
"""
from __future__ import annotations

import csv
from pathlib import Path

from django.conf import settings

from detection.methods.semantic.word_vectors import TrainConfig, train_from_texts

DATA = Path(settings.BASE_DIR) / "data"
DEMO_MODELS = {
    "la-lemma-demo": (TrainConfig(language="la", unit="lemma", dim=50, epochs=10, min_count=1, workers=1),
                      DATA / "locisimiles" / "pairs_545_with_text.csv", ("text_query", "text_corpus"), ","),
    "grc-lemma-demo": (TrainConfig(language="grc", unit="lemma", dim=50, epochs=10, min_count=1, workers=1),
                       DATA / "dbbe" / "STS_benchmark_medievalGreek.tsv", ("verse1", "verse2"), "\t"),
}


def _texts(path: Path, columns, delimiter: str) -> list[str]:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter=delimiter))
    return list(dict.fromkeys(r[c] for r in rows for c in columns if r.get(c)))


def load_demo_vectors() -> str:
    done = []
    for name, (config, path, columns, delimiter) in DEMO_MODELS.items():
        if (Path(settings.MODELS_DIR) / name).exists() or not path.is_file():
            continue
        m = train_from_texts(_texts(path, columns, delimiter), name, config, models_dir=settings.MODELS_DIR,
                             corpus_label=path.name)
        done.append(f"{name} ({m['vocab_size']} units, {m['bytes'] / 1024:.0f} KiB)")
    return "demo word vectors trained: " + (", ".join(done) if done else "already there")
