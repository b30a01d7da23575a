from pathlib import Path

import pytest

DATA = Path("/work/shared/data")
if not DATA.exists():
    DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
TEXTS = DATA / "latin_texts"


@pytest.fixture(scope="session")
def data_dir():
    if not DATA.exists():
        pytest.skip("shared data not available")
    return DATA
