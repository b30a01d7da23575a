"""Demo data: the locisimiles package's example texts (11 Jerome queries, 10 Virgil sources) uploaded for the
demo owner (`core.demo.DEMO_OWNER`), and one detection with the lexical-rule reranker queued for the worker
(idempotent)."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

from core.demo import DEMO_OWNER


def load_demo_workbench() -> str:
    from django.contrib.auth import get_user_model

    from workbench.models import DetectionRun, Document
    from workbench.services import detection_run_create, document_upload

    owner = get_user_model().objects.filter(username=DEMO_OWNER).first()
    examples = Path(settings.DATA_DIR) / "locisimiles" / "package_examples"
    if owner is None or not (examples / "hieronymus_samples.csv").exists():
        return f"skipped (no user {DEMO_OWNER!r} or no package examples)"
    docs = []
    for name in ("hieronymus_samples.csv", "vergil_samples.csv"):
        doc = Document.objects.filter(owner=owner, name=name).first()
        docs.append(doc or document_upload(name=name, data=(examples / name).read_bytes(), owner=owner))
    if not getattr(settings, "SIMILIA_DEMO_RUNS", False) or DetectionRun.objects.filter(owner=owner).exists():
        return "2 example texts present"
    run = detection_run_create(query_document=docs[0], source_document=docs[1], retriever="bm25-lemma", top_k=3,
                               reranker="lexical-rule", thresholds={"cit.": 0.2, "cf.": 0.2},
                               name="Jerome and Virgil (package examples)", owner=owner)
    return f"2 example texts, detection {run.pk} queued for the worker"
