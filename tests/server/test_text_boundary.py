"""Input that can never poison storage: a lone surrogate or a NUL in any JSON string is a 400 naming
the field, and data an older version stored with one still reads (never a 500)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from inferwatch.alerting import ALERTING_STATE_FILE
from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock
from inferwatch.server import ServerParts, build
from inferwatch.server._outcome_store import OUTCOMES_FILE

T0 = 1_700_000_000.0
TOKEN = "t0ken-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


def _build(tmp_path: Path) -> ServerParts:
    cfg = parse_config(f"server: {{data_dir: '{tmp_path}/data', api_token: {TOKEN}}}\n"
                       "rules: {default_pack: false}")
    return build(cfg, clock=SimulatedClock(T0), announce=lambda _: None)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    parts = _build(tmp_path)
    with TestClient(parts.app(), raise_server_exceptions=False) as c:
        yield c
    parts.stop()


# rule: the escape is JSON's own (valid JSON), the string it makes is not text
LONE = '"\\ud800"'
SILENCE = ('{"matchers": [{"name": "a", "value": LONE, "isRegex": false}], '
           '"startsAt": "2023-11-14T22:13:20Z", "endsAt": "2033-11-14T22:13:20Z", '
           '"createdBy": "x", "comment": "y"}')
CASES = [  # (path, body, the field the error names); before: 500 on the first three
    ("/api/v1/outcomes", '{"outcomes": [{"request_id": "r1", "label": LONE}]}', "body.outcomes[0].label"),
    ("/api/v1/alerts/ack", '{"matchers": ["a=b"], "by": LONE}', "body.by"),
    ("/api/v2/alerts", '[{"labels": {"alertname": LONE}}]', "body[0].labels.alertname"),
    ("/api/v2/silences", SILENCE, "body.matchers[0].value"),
    ("/api/v1/alertmanager", '{"version": "4", "alerts": [{"status": "firing", '
     '"labels": {"a": "x\\u0000"}}]}', "body.alerts[0].labels.a"),
]


@pytest.mark.parametrize(("path", "body", "field"), CASES)
def test_a_lone_surrogate_or_nul_is_a_400_naming_the_field(client: TestClient, path: str, body: str,
                                                           field: str) -> None:
    r = client.post(path, content=body.replace("LONE", LONE).encode(), headers=AUTH)
    assert r.status_code == 400, r.text
    assert field in r.text and "not valid text" in r.text


def test_data_stored_poisoned_by_an_older_version_still_reads(tmp_path: Path) -> None:
    _build(tmp_path).stop()  # the files and their tables
    data = tmp_path / "data"
    with sqlite3.connect(data / ALERTING_STATE_FILE) as db:  # what the old API wrote (json.dumps escapes)
        db.execute("INSERT INTO silences VALUES ('s1', ?, ?, ?, 'ops', 'c', ?)",
                   ('[["a", "=", "\\ud800"]]', T0 - 10, T0 + 3600, T0 - 10))
    with sqlite3.connect(data / OUTCOMES_FILE) as db:
        db.execute("INSERT INTO outcomes (request_id, label, model, time, received) "
                   "VALUES ('r', ?, '', ?, ?)", ('"\\udc80"', T0, T0))
    parts = _build(tmp_path)
    try:
        with TestClient(parts.app(), raise_server_exceptions=False) as c:
            silences = c.get("/api/v2/silences")
            assert silences.status_code == 200 and silences.json()[0]["matchers"][0]["value"] == "\ufffd"
            outcomes = c.get("/api/v1/outcomes")
            assert outcomes.status_code == 200
            assert outcomes.json()["data"]["outcomes"][0]["label"] == "\ufffd"
    finally:
        parts.stop()


NINES = b"9" * 5000


@pytest.mark.parametrize(("method", "path", "kw"), [
    # rule: an error names the value without printing it whole, and never Python's int-digits hint
    ("POST", "/api/v1/outcomes", {"content": b'{"outcomes": [{"request_id": "a", "label": %s}]}' % NINES}),
    ("POST", "/api/v1/alerts/ack", {"content": b'{"group_id": "x", "by": "a", "expires": %s}' % NINES}),
    ("GET", "/api/v1/outcomes", {"params": {"after": "9" * 300}}),
    ("GET", "/api/v1/dashboard/timeline", {"params": {"since": "9" * 300}}),
    ("POST", "/api/v2/silences", {"content": b'{"matchers": [{"name": "a", "value": "b", "isRegex": false}], '
                                             b'"startsAt": "' + b"9" * 300 + b'", "endsAt": "x"}'}),
])
def test_errors_show_no_300_digit_number_and_no_interpreter_hint(client: TestClient, method: str, path: str,
                                                                 kw: dict[str, object]) -> None:
    r = client.request(method, path, headers=AUTH, **kw)  # type: ignore[arg-type]
    assert r.status_code == 400, r.text
    assert "9" * 100 not in r.text and "int_max_str_digits" not in r.text and "4300" not in r.text
