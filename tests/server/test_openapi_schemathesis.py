"""Every operation in the server's OpenAPI document, fuzzed by schemathesis: no 500, and nothing a write
stored that a read cannot serve. A bounded budget (a few examples per operation) keeps it in ``make test``;
``benchmarks/bench_fuzz.py`` is the longer, mutating run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from starlette.testclient import TestClient

from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock
from inferwatch.server import build

T0 = 1_700_000_000.0
TOKEN = "fuzz-t0ken"
AUTH = {"Authorization": f"Bearer {TOKEN}"}  # with the token, so the writes reach the stores
READS = ["/api/v2/silences", "/api/v2/alerts", "/api/v2/alerts/groups", "/api/v1/outcomes",
         "/api/v1/notifications", "/api/v1/alerts/history", "/api/v1/alerts/oncall-groups", "/api/v1/alerts"]
EXAMPLES = 3  # per operation: ~30 operations in well under a minute on a loaded runner


def _check(case: Any, reader: TestClient) -> None:
    response = case.call(headers=AUTH)
    documented = {str(code) for code in case.operation.definition.raw.get("responses", {})}
    if str(response.status_code) not in documented:  # a documented 503 (not ready yet) is no server error
        case.validate_response(response, checks=[not_a_server_error])
    if case.method.upper() != "GET" and response.status_code < 300:
        for path in READS:  # what the write stored, every read still serves
            got = reader.get(path, headers=AUTH)
            assert got.status_code < 500, (case.method, case.path, path, got.text[:300])


@pytest.mark.filterwarnings("ignore:Skipped test cases with unsupported payload media types")
def test_no_operation_answers_500_and_every_write_stays_readable(tmp_path: Path) -> None:
    cfg = parse_config(f"server: {{data_dir: '{tmp_path}', api_token: {TOKEN}}}\n"
                       "rules: {default_pack: false}\n"
                       "alerting: {route: {receiver: terminal, group_wait: 0s}}")
    parts = build(cfg, clock=SimulatedClock(T0), announce=lambda _: None)
    app = parts.app()
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", app)
    failed: list[str] = []
    tried = 0
    try:
        with TestClient(app, raise_server_exceptions=False) as reader:
            for result in schema.get_all_operations():
                operation = result.ok()
                tried += 1

                @given(case=operation.as_strategy())
                @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                          phases=[Phase.generate], suppress_health_check=list(HealthCheck))
                def fuzz(case: Any) -> None:
                    _check(case, reader)

                try:
                    fuzz()
                except Exception as exc:  # every operation gets its turn; all failures are reported
                    failed.append(f"{operation.label}: {exc}")
    finally:
        parts.stop()
    assert tried >= 25  # the document lists the server's operations
    assert failed == [], "\n\n".join(failed)
