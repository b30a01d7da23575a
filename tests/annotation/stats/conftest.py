import csv
from pathlib import Path

import pytest

STS = Path("/work/shared/data/dbbe/STS_benchmark_medievalGreek.tsv")


@pytest.fixture(scope="session")
def sts_rows():
    """(reference_id, candidate_id, score_string) rows of the released Greek STS gold."""
    if not STS.exists():
        pytest.skip(f"{STS} not available")
    with STS.open(encoding="utf-8") as fh:
        return [(r["verse1_id"], r["verse2_id"], r["normalized_counts"])
                for r in csv.DictReader(fh, delimiter="\t")]
