"""Demo data: the Loci Similes 545-pair benchmark and the DBBE Greek STS gold (idempotent)."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

from benchmarks.services import benchmark_import_545, gold_set_import_file

LOCI_NAME = "loci-similes-545"
STS_NAME = "dbbe-sts-medieval-greek"


def load_demo_benchmarks() -> str:
    data = Path(settings.DATA_DIR)
    lines = []
    loci = data / "locisimiles"
    if (loci / "pairs_545_with_text.csv").exists():
        version, created = benchmark_import_545(
            with_text_path=loci / "pairs_545_with_text.csv", ref_type_path=loci / "pairs_545_ref_type.csv",
            name=LOCI_NAME, version="1",
            description="545 expert-verified Jerome/Lactantius references with cit./cf. types (Loci Similes).")
        lines.append(f"{LOCI_NAME} v1: {version.gold.count()} gold references ({'loaded' if created else 'present'})")
    else:
        lines.append(f"{LOCI_NAME}: {loci} missing, skipped")
    sts = data / "dbbe" / "STS_benchmark_medievalGreek.tsv"
    if sts.exists():
        gold_set, created = gold_set_import_file(
            path=sts, name=STS_NAME, if_exists="return",
            source_description="Swaelens et al., Byzantine Greek book epigrams STS benchmark (DBBE).")
        lines.append(f"{STS_NAME}: {gold_set.pairs.count()} pairs ({'loaded' if created else 'present'})")
    else:
        lines.append(f"{STS_NAME}: {sts} missing, skipped")
    return "; ".join(lines)
