"""Fixtures shared by the whole suite: users per role and API clients, query-count budgets, the real DBBE files
and tiny offline transformer models (built by the tests: a 2-layer BERT and its sentence-transformers wrapper)."""
import os
from pathlib import Path

import pytest

from core.paths import shared_data_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROLE_NAMES = ("annotator", "lead", "researcher")
_KEYS: dict[int, str] = {}


def api_key(user) -> str:
    """A working API key of `user`. Keys are stored hashed, so a test cannot read one back: this is the key it
    issued before while that still authenticates, else a new one (which replaces the user's token)."""
    from core.models import ApiToken
    from core.services import token_issue

    key = _KEYS.get(user.pk)
    if key is None or not ApiToken.objects.filter(user_id=user.pk, digest=ApiToken.digest_of(key)).exists():
        key = _KEYS[user.pk] = token_issue(user=user)
    return key


@pytest.fixture
def make_user(db):
    from core.services import user_create_or_update

    def make(username: str, *roles: str, staff: bool = False):
        user, _ = user_create_or_update(username=username, password="pw-" + username, roles=roles, is_staff=staff)
        return user

    return make


@pytest.fixture
def users(make_user):
    """One user per role, plus a user with no role and a staff user."""
    return {
        "annotator": make_user("ann", "annotator"),
        "lead": make_user("lea", "lead"),
        "researcher": make_user("res", "researcher"),
        "norole": make_user("nobody"),
        "staff": make_user("staff", staff=True),
    }


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def client_for(users):
    """APIClient authenticated with the user's token (`None` role gives an anonymous client)."""
    from rest_framework.test import APIClient

    def make(role):
        client = APIClient()
        if role is not None:
            user = users[role] if isinstance(role, str) else role
            client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
        return client

    return make


@pytest.fixture
def page_client(db):
    """A Django test client logged in as the given user (the pages' session login): ``page_client(user)``."""
    from django.test import Client

    def make(user) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return make


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with an empty cache (login/token failure counts live there) and an empty index cache
    (fitted pool indexes, ``VAR_DIR/index-cache``: a test counting fits does not see another test's)."""
    import shutil

    from django.conf import settings
    from django.core.cache import cache

    cache.clear()
    shutil.rmtree(Path(settings.VAR_DIR) / "index-cache", ignore_errors=True)
    yield


QUERY_COUNTS = os.path.join(os.path.dirname(__file__), "query_counts.json")


@pytest.fixture(scope="session")
def _query_count_baselines():
    """The recorded SQL query counts per endpoint (tests/query_counts.json, NetBox's habit). Run the suite with
    SIMILIA_UPDATE_QUERY_COUNTS=1 (on PostgreSQL, as CI) to rewrite the file with the counts measured."""
    import json

    with open(QUERY_COUNTS, encoding="utf-8") as fh:
        baselines = json.load(fh)
    measured: dict[str, int] = {}
    yield baselines, measured
    if os.environ.get("SIMILIA_UPDATE_QUERY_COUNTS") == "1" and measured:
        with open(QUERY_COUNTS, "w", encoding="utf-8") as fh:
            json.dump({**baselines, **measured}, fh, indent=2, sort_keys=True)
            fh.write("\n")


@pytest.fixture
def query_budget(_query_count_baselines):
    """``with query_budget("GET /api/v1/projects/"):`` fails when the block runs more SQL queries than the
    endpoint's recorded count (a missing key fails too: record it)."""
    import contextlib

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    baselines, measured = _query_count_baselines

    @contextlib.contextmanager
    def budget(endpoint: str):
        with CaptureQueriesContext(connection) as ctx:
            yield
        count = len(ctx.captured_queries)
        measured[endpoint] = max(count, measured.get(endpoint, 0))
        if os.environ.get("SIMILIA_UPDATE_QUERY_COUNTS") == "1":
            return
        assert endpoint in baselines, f"no recorded query count for {endpoint!r} in tests/query_counts.json"
        assert count <= baselines[endpoint], (
            f"{endpoint}: {count} SQL queries, recorded {baselines[endpoint]} (tests/query_counts.json); "
            "queries:\n" + "\n".join(q["sql"][:200] for q in ctx.captured_queries))

    return budget


# ------------------------------------------------------------------ DBBE files and tiny offline models
DATA_DIR = shared_data_dir() / "dbbe"  # $SIMILIA_SHARED_DATA_DIR or the shared/data folder beside the checkout
STS_FILE = DATA_DIR / "STS_benchmark_medievalGreek.tsv"
VERSES_FILE = DATA_DIR / "dbbe_verses_sample.csv"
LEMMA_FILE = DATA_DIR / "lingAnn_GS_medievalGreek.tsv"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"data file {path} not available (set SIMILIA_SHARED_DATA_DIR)")
    return path


@pytest.fixture(scope="session")
def sts_file() -> Path:
    return _need(STS_FILE)


@pytest.fixture(scope="session")
def verses_file() -> Path:
    return _need(VERSES_FILE)


@pytest.fixture(scope="session")
def lemma_file() -> Path:
    return _need(LEMMA_FILE)


@pytest.fixture(scope="session")
def greek_verses(sts_file) -> list[str]:
    from benchmarks.greek_sts.gold_files import read_sts_gold

    pairs = read_sts_gold(sts_file)
    return list(dict.fromkeys([p.reference_text for p in pairs] + [p.candidate_text for p in pairs]))


@pytest.fixture(scope="session")
def torch_one_thread():
    import torch

    torch.set_num_threads(1)
    return torch


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory, greek_verses, torch_one_thread) -> Path:
    """A 2-layer BERT (hidden 64, random weights, seed 0) with a WordPiece vocabulary trained on the Greek verses."""
    from tests.tiny_models import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"), greek_verses)


@pytest.fixture(scope="session")
def tiny_sentence_transformer_dir(tmp_path_factory, tiny_bert_dir) -> Path:
    """The tiny BERT wrapped as a sentence-transformers bi-encoder (mean pooling), saved to a folder."""
    from tests.tiny_models import build_tiny_sentence_transformer

    return build_tiny_sentence_transformer(tmp_path_factory.mktemp("tiny_st"), tiny_bert_dir)


LATIN_LIBRARY = shared_data_dir() / "latin_library" / "latin_library.tar.xz"
LATIN_LIBRARY_SLICE = ("latin_library/12tables.txt", "latin_library/ammianus/14.txt",
                       "latin_library/augustine/conf1.txt")


@pytest.fixture(scope="session")
def latin_library_slice(tmp_path_factory) -> Path:
    """A folder holding three real files of The Latin Library (early in the archive, so the stream stops soon):
    a law text, a historian's book and a book of the Confessions, with their web-page headers and footers."""
    import tarfile

    out = tmp_path_factory.mktemp("corpora") / "latin_library_slice"
    wanted = set(LATIN_LIBRARY_SLICE)
    with tarfile.open(_need(LATIN_LIBRARY), mode="r|xz") as tar:
        for member in tar:
            if member.name in wanted:
                target = out / member.name.split("/", 1)[1]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(tar.extractfile(member).read())
                wanted.discard(member.name)
                if not wanted:
                    break
    assert not wanted, f"missing from the archive: {sorted(wanted)}"
    return out


@pytest.fixture
def migrate_back_and_forth(transactional_db):
    """``run(before, after, make_old_rows)``: migrate to ``before``, call ``make_old_rows(apps)`` with that state's
    historical models, migrate to ``after`` and return what it returned; whatever happens, every app is left at
    its latest migration for the tests that follow."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    def run(before: list, after: list, make_old_rows):
        try:
            executor = MigrationExecutor(connection)
            executor.migrate(before)
            made = make_old_rows(executor.loader.project_state(before).apps)
            executor = MigrationExecutor(connection)
            executor.loader.build_graph()
            executor.migrate(after)
            return made
        finally:
            executor = MigrationExecutor(connection)
            executor.loader.build_graph()
            executor.migrate(executor.loader.graph.leaf_nodes())

    return run


def run_data_migration(app: str, migration: str, function: str) -> None:
    """A data migration's function run on the rows there are now (the job-row conversions read today's models)."""
    import importlib

    from django.apps import apps

    getattr(importlib.import_module(f"{app}.migrations.{migration}"), function)(apps, None)
