"""Schema-driven API fuzzer: schemathesis generates requests from the OpenAPI schema (`/api/schema/`, drf-spectacular)
for every operation, valid and invalid ones, in every body encoding the operation takes (JSON, form-encoded,
multipart), and each is sent as anonymous, annotator, researcher, lead and staff, with the demo's objects in place
(`manage.py load_demo`, plus an evaluation run with its queued job and a version awaiting approval); half of
the generated ids are replaced by ids that exist. No answer may be a 5xx.

Usage: .venv/bin/python perf/fuzz_api.py [--requests 20000] [--seed 1] [--store]
  --store  writes the figures to perf/expected/security/fuzz_api.yaml (the full form's stored run).

`tests/core/test_api_fuzz.py` runs the short form (`fuzz(...)` with a few hundred requests, fixed seed) on the
suite's database (SQLite, or PostgreSQL where DATABASE_URL names it, as in CI). Jobs are queued, never run (the
Celery app is not eager here), so a request never waits on a job.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = ROOT / "perf" / "expected" / "security" / "fuzz_api.yaml"  # not a suite file (perf/suite_check.py)
# role -> demo login (core.demo.DEMO_USERS); anonymous sends no credentials
ROLES = {"anonymous": None, "annotator": ("annotator1", "annotator-demo-pass"),
         "researcher": ("researcher", "researcher-demo-pass"), "lead": ("lead", "lead-demo-pass"),
         "staff": ("admin", "admin-demo-pass")}
ID_PARAMS = ("id", "pk", "item_id", "user_id")
# What a schema-valid generator rarely makes: numbers beyond a 64-bit column or a float, 5,000 digits, NUL, deep
# nesting (as text: a form field, or a JSON body written by hand), long text. Put in one case of two, at a field
# of the body, or as the value of a method parameter inside an object field (the registry's parameter names).
OBJECT_FIELDS = ("params", "retriever_params", "reranker_params", "thresholds")  # the API's JSON-object fields
HUGE_NUMBERS = [10**309, -(10**309), 2**63, 2**40, 1e308, 1.5e-320]
HOSTILE_TEXT = ["1" + "0" * 309, "1e400", "-1e400", "9" * 5000, "NaN", "a\x00b", "[" * 3000 + "]" * 3000,
                '{"a": ' * 200 + "1" + "}" * 200, "x" * 20_000, "²", "0x10"]


def objects_in_place() -> None:
    """The demo, and what it lacks for the API to have something behind more ids: an evaluation run with its queued
    job, a version awaiting approval (proposed by the researcher)."""
    import io

    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from benchmarks.models import BenchmarkVersion
    from benchmarks.services import evaluation_run_create

    call_command("load_demo", stdout=io.StringIO())
    users = get_user_model().objects
    version = BenchmarkVersion.objects.order_by("pk").first()
    evaluation_run_create(version=version, method="bm25-lemma", ks=[1, 10], owner=users.get(username="lead"),
                          enqueue=False)
    BenchmarkVersion.objects.create(benchmark=version.benchmark, version="fuzz-private", awaiting_approval=True,
                                    proposed_by=users.get(username="researcher"), query_corpus=version.query_corpus,
                                    source_corpus=version.source_corpus)


def _token(username: str, password: str) -> str:
    """The role's API token, issued by the API itself (POST /api/v1/auth/token/), as a client gets it: through
    the WSGI application, as the fuzzer's requests (Django's test client would connect close_old_connections)."""
    from django.core.cache import cache
    from django.core.wsgi import get_wsgi_application
    from werkzeug.test import Client

    cache.clear()  # the fuzzer's wrong passwords must not throttle this
    response = Client(get_wsgi_application()).post("/api/v1/auth/token/", data={"username": username,
                                                                               "password": password})
    assert response.status_code == 200, response.text
    return response.json["token"]


def _case_strategy(operation):
    from hypothesis import strategies as st
    from schemathesis.generation import GenerationMode

    strategies = []
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
        try:
            strategies.append(operation.as_strategy(generation_mode=mode))
        except Exception:  # noqa: BLE001 - an operation with nothing to negate has no negative strategy
            continue
    return st.one_of(strategies) if strategies else None


def _vocabulary() -> dict[str, list]:
    """Values that exist for the body fields naming a method or a kind, and each method's parameter names."""
    from detection.methods import registry
    from detection.services.training import KINDS

    retrievers = registry.names("retriever")
    return {"method": retrievers + registry.names("reranker"), "retriever": retrievers,
            "reranker": ["", *registry.names("reranker")], "kind": list(KINDS),
            "params": {spec.name: [p.name for p in spec.params] for spec in registry.specs()}}


def _an_id(rng: random.Random) -> int:
    return rng.choice((1, 1, 1, 2, 2, 3, 4, 6, 9, 12))  # the demo's objects have small ids


def _real(case, rng: random.Random, values: dict) -> None:
    """Most ids (path and body) replaced by ids that exist, and method names by registered ones."""
    for name in ID_PARAMS:
        if name in (case.path_parameters or {}) and rng.random() < 0.7:
            case.path_parameters[name] = _an_id(rng)
    if isinstance(case.body, dict):
        for key, value in list(case.body.items()):
            if key in values and key != "params" and rng.random() < 0.7:
                case.body[key] = rng.choice(values[key])
            elif isinstance(value, int) and not isinstance(value, bool) and rng.random() < 0.7:
                case.body[key] = _an_id(rng)


def _hostile(case, rng: random.Random, values: dict) -> None:
    """Put one hostile value into `case`: an object field's method parameter (the method the body names), a field
    of the body, the query or a path parameter."""
    as_text = case.media_type not in (None, "application/json")
    scalar = rng.choice(HOSTILE_TEXT if as_text or rng.random() < 0.3 else HUGE_NUMBERS)
    body = case.body if isinstance(case.body, dict) else None
    objects = sorted({k for k in body or () if isinstance(body[k], dict)} | set(OBJECT_FIELDS)) if body is not None \
        else []
    if objects and rng.random() < 0.7:
        key = rng.choice(objects)
        method = body.get(key.replace("params", "").rstrip("_") or "method") or body.get("method")
        names = values["params"].get(method) if isinstance(method, str) else None
        names = ["cit.", "cf."] if key == "thresholds" else names or ["k1", "C", "lemma_weight"]
        nested = {rng.choice(names): rng.choice(HUGE_NUMBERS)}
        body[key] = (rng.choice([json.dumps(nested), HOSTILE_TEXT[6], HOSTILE_TEXT[7]]) if as_text else nested)
    elif body is not None and body:
        body[rng.choice(sorted(body))] = scalar
    elif case.path_parameters and rng.random() < 0.3:
        case.path_parameters[rng.choice(sorted(case.path_parameters))] = rng.choice(HOSTILE_TEXT)
    else:
        case.query = {**(case.query or {}), rng.choice(["page", "page_size", "since", "status", "q"]): str(scalar)}


def fuzz(n_requests: int, seed: int, *, log=print) -> dict:
    """Send at least `n_requests` generated requests (each generated case as every role) and return the figures:
    requests sent, answers by status class, every 5xx with its request and traceback. Needs a database with
    `objects_in_place()` done."""
    import schemathesis
    from django.core import signals
    from django.core.wsgi import get_wsgi_application
    from django.db import close_old_connections
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    from config.celery import app as celery_app

    celery_app.conf.task_always_eager = False  # jobs are queued for a worker that never comes
    for signal in (signals.request_started, signals.request_finished):  # one connection, as Django's test client
        signal.disconnect(close_old_connections)  # keeps (a test's transaction stays open across requests)
    exceptions: list[str] = []

    def record(sender, request=None, **kwargs):
        exceptions.append(traceback.format_exc(limit=-6))

    signals.got_request_exception.connect(record)
    try:
        schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application())
        operations = [result.ok() for result in schema.get_all_operations()]
        tokens = {role: _token(*login) if login else None for role, login in ROLES.items()}
        rng = random.Random(seed)
        statuses: Counter = Counter()
        errors: list[dict] = []
        sent = [0]
        per_round = max(1, math.ceil(n_requests / (len(operations) * len(ROLES))))
        started = time.monotonic()

        values = _vocabulary()

        def send(case) -> None:
            _real(case, rng, values)
            if rng.random() < 0.5:
                _hostile(case, rng, values)
            for role, token in tokens.items():
                headers = {"Authorization": f"Token {token}"} if token else {}
                exceptions.clear()
                try:
                    response = case.call(headers=headers)
                except Exception as exc:  # noqa: BLE001 - a request the client could not send is not one sent
                    statuses[f"not sent ({type(exc).__name__})"] += 1
                    continue
                sent[0] += 1
                statuses[str(response.status_code)] += 1
                if response.status_code >= 500:
                    errors.append({"role": role, "status": response.status_code, "request": case.as_curl_command(
                        headers=headers)[:2000], "traceback": "".join(exceptions)[-3000:]})
                    log(f"{response.status_code} as {role}: {case.method} {case.formatted_path}\n{exceptions[-1:]}")
                if token and response.status_code in (401, 403) and "token" in response.text.lower():
                    tokens[role] = _token(*ROLES[role])  # the fuzzer revoked the role's token (DELETE): a new one

        round_no = 0
        while sent[0] < n_requests:
            before = sent[0]
            for operation in operations:
                strategy = _case_strategy(operation)
                if strategy is None or sent[0] >= n_requests:
                    continue

                @settings(max_examples=per_round, database=None, deadline=None, phases=[Phase.generate],
                          suppress_health_check=list(HealthCheck))
                @hypothesis_seed(seed * 1000 + round_no)
                @given(strategy)
                def run(case):
                    send(case)

                run()
            round_no += 1
            log(f"round {round_no}: {sent[0]} requests, {len(errors)} 5xx, {time.monotonic() - started:.0f} s")
            if sent[0] == before:
                break
        return {"requests": sent[0], "operations": len(operations), "roles": list(ROLES), "seed": seed,
                "seconds": round(time.monotonic() - started, 1), "statuses": dict(sorted(statuses.items())),
                "server_errors": len(errors), "errors": errors}
    finally:
        signals.got_request_exception.disconnect(record)
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--store", action="store_true", help=f"write the figures to {EXPECTED.relative_to(ROOT)}")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "perf"))
    from _testdb import throwaway_database

    with throwaway_database():
        import logging

        logging.disable(logging.WARNING)  # 4xx by the thousand; every 5xx is reported below
        from django.db import connection

        objects_in_place()
        figures = fuzz(args.requests, args.seed)
        figures["database"] = connection.vendor
    for error in figures["errors"][:20]:
        print(f"--- {error['status']} as {error['role']}\n{error['request']}\n{error['traceback']}")
    print(f"{figures['requests']} requests over {figures['operations']} operations as {len(ROLES)} roles in "
          f"{figures['seconds']} s (seed {args.seed}, {figures['database']}): {figures['statuses']}; "
          f"{figures['server_errors']} answers 5xx")
    if args.store:
        import datetime as dt
        import platform

        import yaml

        stored = {"name": "fuzz_api", "description": "Schema-driven API fuzzer (issue 40): generated requests as "
                  "every role, the demo's objects in place; the measure is 0 answers 5xx.",
                  "command": f".venv/bin/python perf/fuzz_api.py --requests {args.requests} --seed {args.seed} --store",
                  "measured": f"{dt.date.today()}, Python {platform.python_version()}",
                  **{k: v for k, v in figures.items() if k != "errors"}}
        EXPECTED.write_text(yaml.safe_dump(stored, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return 1 if figures["server_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
