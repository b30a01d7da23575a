"""The reference pages stay true (issue 27): `docs/reference/cli.md` is every command's own argparse parser,
`endpoints.md` the OpenAPI schema, and the table of `settings.md` every environment variable the code reads, each
as `scripts/reference_pages.py` writes it now; the settings page's hand-written part names only variables the code
reads, and every variable the settings read has a meaning (a comment in the code or a line of that part)."""
import re
from pathlib import Path

import pytest

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def generator():
    return load_script("reference_pages")


@pytest.fixture(scope="module")
def pages(generator):
    return generator.pages()


def test_the_reference_pages_are_what_the_code_says(generator, pages):
    assert generator.stale(pages) == [], "run .venv/bin/python scripts/reference_pages.py"


def test_every_command_and_option_is_on_the_cli_page(pages):
    from django.core.management import get_commands, load_command_class

    text = pages["docs/reference/cli.md"]
    ours = {name: app for name, app in get_commands().items() if (ROOT / app / "management").is_dir()}
    assert len(ours) >= 17 and "detect" in ours and "evaluate" in ours
    for name, app in ours.items():
        section = text.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        parser = load_command_class(app, name).create_parser("manage.py", name)
        for action in parser._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag not in {"--help", "--version", "--settings", "--pythonpath",
                                                          "--traceback", "--no-color", "--force-color",
                                                          "--skip-checks", "--verbosity"}:
                    assert f"`{flag}" in section, (name, flag)


@pytest.mark.django_db
def test_every_endpoint_of_the_served_schema_is_listed(pages, client_for):
    served = client_for("researcher").get("/api/schema/?format=json").json()
    text = pages["docs/reference/endpoints.md"]
    for path, operations in served["paths"].items():
        for method in operations:
            assert f"| `{path}` | {method.upper()} |" in text, (method, path)


def test_the_settings_page_names_what_the_code_reads(generator, pages):
    reads = generator.settings_reads()
    code = generator.code_reads()
    assert {"DJANGO_SECRET_KEY", "DATABASE_URL", "SIMILIA_TOKEN_TTL_HOURS", "DATABASE_CONNECT_TIMEOUT"} <= set(reads)
    assert "SIMILIA_SYNONYMS_DIR" in code
    page = pages["docs/reference/settings.md"]
    hand, generated = page.split(generator.SETTINGS_MARK, 1)
    named = set(re.findall(r"`([A-Z][A-Z0-9_]{3,})`", hand))
    assert named and named <= set(reads) | set(code), f"named but never read: {sorted(named - set(reads) - set(code))}"
    unexplained = sorted(n for n, e in reads.items() if not e["meaning"] and n not in named)
    assert not unexplained, f"say what these are for (a comment in the settings, or a line of settings.md): {unexplained}"
    for name in reads:
        assert f"| `{name}` |" in generated, name
    # the defaults are the code's: the token lifetime is 30 days (the hand-typed table said "0 (off)")
    assert "| `SIMILIA_TOKEN_TTL_HOURS` | integer, at least 0 | 720 (`30 * 24`) |" in generated
    assert "| `DJANGO_SECRET_KEY` | text | `local-development-only-not-secret` | local, test (`test-only-not-secret`), " \
           "production (required) |" in generated
