"""Issue 36 #1: delayed labels through the server: the bounded outcome table and ``/api/v1/outcomes``."""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from inferwatch._exceptions import StoreError
from inferwatch.config import OutcomesConfig, parse_config
from inferwatch.model import SimulatedClock
from inferwatch.server import ServerParts, build
from inferwatch.server._outcome_store import Outcome, OutcomeStore

T0 = 1_700_000_000.0
TOKEN = "t0ken-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PATH = "/api/v1/outcomes"


def _store(clock: SimulatedClock, path: Path | None = None, **limits: float) -> OutcomeStore:
    return OutcomeStore(path, clock, OutcomesConfig(**limits))  # type: ignore[arg-type]


def _outcomes(*ids: str, model: str = "") -> list[Outcome]:
    return [Outcome(i, 1, model) for i in ids]


# --- the table --------------------------------------------------------------------------------

def test_the_cursor_reads_every_outcome_once_in_order() -> None:
    store = _store(SimulatedClock(T0))
    assert store.add(_outcomes("a", "b", "c", "d", "e")) == (1, 5)
    page = store.after(0, 2)
    assert [o.request_id for o in page.outcomes] == ["a", "b"] and (page.next, page.last) == (2, 5)
    page = store.after(page.next, 10)
    assert [o.seq for o in page.outcomes] == [3, 4, 5] and page.next == 5
    assert store.after(5, 10).outcomes == [] and store.after(5, 10).next == 5


def test_over_max_rows_the_oldest_go_first_and_numbers_are_never_reused() -> None:
    store = _store(SimulatedClock(T0), max_rows=3)
    store.add(_outcomes("a", "b", "c", "d", "e"))
    assert store.rows == 3 and store.dropped == {"age": 0, "rows": 2}
    assert [o.request_id for o in store.after(0, 10).outcomes] == ["c", "d", "e"]
    assert store.add(_outcomes("f")) == (6, 6)  # a number once given is not given again
    assert [o.seq for o in store.after(0, 10).outcomes] == [4, 5, 6]


def test_retention_deletes_by_the_time_received_on_the_simulated_clock() -> None:
    clock = SimulatedClock(T0)
    store = _store(clock, retention=100.0)
    store.add(_outcomes("old1", "old2"))
    clock.advance(50.0)
    store.add(_outcomes("new"))
    clock.advance(60.0)  # old ones were received 110 s ago, "new" 60 s ago
    page = store.after(0, 10)
    assert [o.request_id for o in page.outcomes] == ["new"]
    assert store.dropped == {"age": 2, "rows": 0} and store.rows == 1
    assert page.outcomes[0].received == T0 + 50.0


def test_a_model_filter_skips_other_models_and_the_cursor_moves_past_them() -> None:
    store = _store(SimulatedClock(T0))
    store.add([Outcome("a", 1, "ctr"), Outcome("b", 0, "other"), Outcome("c", 1, ""),
               Outcome("d", 0, "other")])
    page = store.after(0, 10, "ctr")
    assert [o.request_id for o in page.outcomes] == ["a", "c"]  # "" is anyone's
    assert page.next == 4  # a short page read everything up to the newest
    full = store.after(0, 1, "ctr")
    assert [o.request_id for o in full.outcomes] == ["a"] and full.next == 1


def test_labels_keep_their_json_type_and_the_table_survives_a_restart(tmp_path: Path) -> None:
    clock = SimulatedClock(T0)
    path = tmp_path / "outcomes.sqlite"
    store = _store(clock, path)
    store.add([Outcome("i", 2), Outcome("f", 0.25), Outcome("s", "cat"), Outcome("b", True, time=T0 - 60)])
    store.close()
    again = _store(clock, path)
    got = again.after(0, 10).outcomes
    assert [(o.label, type(o.label)) for o in got] == [(2, int), (0.25, float), ("cat", str), (True, bool)]
    assert got[3].to_json()["time"] == T0 - 60 and got[0].to_json()["time"] == T0  # time: when received
    assert again.rows == 4 and again.add(_outcomes("next")) == (5, 5)
    assert again.epoch == store.epoch and again.after(0, 1).epoch == store.epoch  # the same sequence
    again.close()


def test_a_write_whose_bounding_fails_stores_nothing(tmp_path: Path) -> None:
    # the rows were committed before the delete that bounds the table: the 503 left them stored
    path = tmp_path / "outcomes.sqlite"
    store = _store(SimulatedClock(T0), path, max_rows=2)
    store.add(_outcomes("a", "b"))
    other = sqlite3.connect(path)  # a table that refuses deletes stands for a failing disk
    other.execute("CREATE TRIGGER keep BEFORE DELETE ON outcomes "
                  "BEGIN SELECT RAISE(ABORT, 'no deletes'); END")
    other.commit()
    with pytest.raises(StoreError, match=r"cannot write \(no deletes\)"):
        store.add(_outcomes("c"))
    assert other.execute("SELECT request_id FROM outcomes ORDER BY seq").fetchall() == [("a",), ("b",)]
    assert store.rows == 2 and store.received == 2 and store.dropped == {"age": 0, "rows": 0}
    other.close()
    store.close()


def test_a_new_table_names_a_new_sequence(tmp_path: Path) -> None:
    # a memory store restarted numbers from 1 again: a poller at cursor 3 that found 5 outcomes there
    # read from 4 on and silently skipped the new 1..3; the epoch tells it the sequence started again
    clock = SimulatedClock(T0)
    first, second = _store(clock), _store(clock)
    assert first.epoch and first.epoch != second.epoch
    assert _store(clock, tmp_path / "a.sqlite").epoch != _store(clock, tmp_path / "b.sqlite").epoch


# --- the API ----------------------------------------------------------------------------------

@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[TestClient, ServerParts, SimulatedClock]]:
    clock = SimulatedClock(T0)
    cfg = parse_config(f"server: {{data_dir: '{tmp_path}/data', api_token: {TOKEN}, "
                       "outcomes: {max_per_request: 50, max_string_length: 16}}")
    parts = build(cfg, clock=clock, announce=lambda _: None)
    with TestClient(parts.app(), raise_server_exceptions=False) as client:
        yield client, parts, clock
    parts.stop()


def test_posted_outcomes_come_back_in_pages_with_a_cursor(api: tuple[TestClient, ServerParts, SimulatedClock]
                                                          ) -> None:
    client, parts, _ = api
    body = {"outcomes": [{"request_id": f"r{i}", "label": i % 2, "model": "ctr"} for i in range(5)]}
    r = client.post(PATH, json=body, headers=AUTH)
    assert r.status_code == 200
    assert r.json() == {"status": "success", "data": {"stored": 5, "first": 1, "last": 5}}
    page = client.get(PATH, params={"after": 0, "limit": 3}).json()["data"]
    assert [o["request_id"] for o in page["outcomes"]] == ["r0", "r1", "r2"] and page["next"] == 3
    assert page["outcomes"][1] == {"seq": 2, "request_id": "r1", "label": 1, "model": "ctr", "time": T0,
                                   "received": T0}
    rest = client.get(PATH, params={"after": page["next"], "model": "ctr"}).json()["data"]
    assert [o["seq"] for o in rest["outcomes"]] == [4, 5] and rest["next"] == rest["last"] == 5
    assert parts.outcomes is not None and page["epoch"] == rest["epoch"] == parts.outcomes.epoch


def test_a_gzip_body_is_accepted_and_the_counts_reach_the_store(
        api: tuple[TestClient, ServerParts, SimulatedClock]) -> None:
    client, _, _ = api
    raw = json.dumps({"outcomes": [{"request_id": "z", "label": "spam", "time": T0 - 3600}]}).encode()
    r = client.post(PATH, content=gzip.compress(raw), headers={**AUTH, "Content-Encoding": "gzip"})
    assert r.status_code == 200, r.text
    assert client.get(PATH).json()["data"]["outcomes"][0]["time"] == T0 - 3600
    got = client.get("/api/v1/query", params={"query": "inferwatch_outcomes_received_total", "time": T0})
    assert got.json()["data"]["result"][0]["value"][1] == "1"


def test_age_and_row_drops_are_counted_in_the_servers_store(
        api: tuple[TestClient, ServerParts, SimulatedClock]) -> None:
    client, _, clock = api
    r = client.post(PATH, json={"outcomes": [{"request_id": "a", "label": 1}]}, headers=AUTH)
    assert r.status_code == 200
    clock.advance(8 * 86400.0)  # past the default retention of 7 days
    assert client.get(PATH).json()["data"]["outcomes"] == []
    q = client.get("/api/v1/query",
                   params={"query": "inferwatch_outcomes_dropped_total", "time": clock.now()})
    dropped = {s["metric"]["reason"]: s["value"][1] for s in q.json()["data"]["result"]}
    assert dropped == {"age": "1", "rows": "0"}


# (rule, body, what the 400 names): bad input is refused whole, naming the field and index
BAD = [
    ("not JSON", b"{", "body: not JSON"),
    ("not an object", b"[1]", "body: expected a JSON object"),
    ("outcomes not a list", b'{"outcomes": {}}', "body: expected a JSON object"),
    ("an item not an object", b'{"outcomes": [7]}', "body.outcomes[0]: expected an object"),
    ("no request_id", b'{"outcomes": [{"label": 1}]}',
     "body.outcomes[0].request_id: expected a string, got null"),
    ("empty request_id", b'{"outcomes": [{"request_id": "", "label": 1}]}', "request_id: must not be empty"),
    ("request_id too long", b'{"outcomes": [{"request_id": "' + b"x" * 17 + b'", "label": 1}]}',
     "body.outcomes[0].request_id: 17 characters, over server.outcomes.max_string_length 16"),
    ("no label", b'{"outcomes": [{"request_id": "a"}, {"request_id": "b"}]}',
     "body.outcomes[0].label: required"),
    ("null label", b'{"outcomes": [{"request_id": "a", "label": 1}, {"request_id": "b", "label": null}]}',
     "body.outcomes[1].label: expected a number, string or boolean, got null"),
    ("a list label", b'{"outcomes": [{"request_id": "a", "label": [1]}]}',
     "body.outcomes[0].label: expected a number, string or boolean, got an array"),
    ("NaN label", b'{"outcomes": [{"request_id": "a", "label": NaN}]}', "body.outcomes[0].label: nan is not"),
    ("huge integer label", b'{"outcomes": [{"request_id": "a", "label": 99999999999999999999}]}',
     "64-bit range"),
    ("unknown field", b'{"outcomes": [{"request_id": "a", "label": 1, "requestId": "b"}]}',
     "body.outcomes[0]: unknown field 'requestId'"),
    ("model not a string", b'{"outcomes": [{"request_id": "a", "label": 1, "model": 3}]}',
     "body.outcomes[0].model: expected a string"),
    ("time a string", b'{"outcomes": [{"request_id": "a", "label": 1, "time": "now"}]}',
     "body.outcomes[0].time: expected Unix seconds"),
    ("time in milliseconds", b'{"outcomes": [{"request_id": "a", "label": 1, "time": 1700000000000}]}',
     "body.outcomes[0].time: 1700000000000.000 is before 2000-01-01 or more than 600s ahead"),
    ("time before 2000", b'{"outcomes": [{"request_id": "a", "label": 1, "time": 5}]}', "before 2000-01-01"),
    ("time a boolean", b'{"outcomes": [{"request_id": "a", "label": 1, "time": true}]}',
     "expected Unix seconds"),
    # an integer past a float's range: math.isfinite raised OverflowError (a 500)
    ("time a 400-digit integer",
     b'{"outcomes": [{"request_id": "a", "label": 1, "time": 1' + b"0" * 400 + b"}]}",
     "body.outcomes[0].time: expected Unix seconds"),
]


@pytest.mark.parametrize(("rule", "body", "named"), BAD, ids=[b[0] for b in BAD])
def test_bad_bodies_answer_400_naming_the_field_and_store_nothing(
        api: tuple[TestClient, ServerParts, SimulatedClock], rule: str, body: bytes, named: str) -> None:
    client, parts, _ = api
    r = client.post(PATH, content=body, headers={**AUTH, "Content-Type": "application/json"})
    assert r.status_code == 400, (rule, r.text)
    assert r.json()["errorType"] == "bad_data" and named in r.json()["error"], (rule, r.json())
    assert parts.outcomes is not None and parts.outcomes.rows == 0


def test_limits_on_every_way_in(api: tuple[TestClient, ServerParts, SimulatedClock]) -> None:
    client, parts, _ = api
    one = {"request_id": "a", "label": 1}
    r = client.post(PATH, json={"outcomes": [one] * 51}, headers=AUTH)  # max_per_request: 50
    assert r.status_code == 413
    assert "51 outcomes, over server.outcomes.max_per_request 50" in r.json()["error"]
    r = client.post(PATH, content=b" " * (2 << 20), headers=AUTH)  # server.http.max_body_bytes: 1 MiB
    assert r.status_code == 413 and "larger than" in r.json()["error"]
    bomb = gzip.compress(b" " * (17 << 20))  # expands past 16 MiB
    r = client.post(PATH, content=bomb, headers={**AUTH, "Content-Encoding": "gzip"})
    assert r.status_code == 413 and "once decompressed" in r.json()["error"]
    r = client.post(PATH, content=b"not gzip", headers={**AUTH, "Content-Encoding": "gzip"})
    assert r.status_code == 400 and "invalid gzip body" in r.json()["error"]
    deep = gzip.compress(b'{"outcomes": ' + b"[" * 5000 + b"]" * 5000 + b"}")
    r = client.post(PATH, content=deep, headers={**AUTH, "Content-Encoding": "gzip"})
    assert r.status_code == 400 and "nested deeper than 32 levels" in r.json()["error"]
    r = client.post(PATH, json={"outcomes": [one]}, headers={**AUTH, "Content-Encoding": "br"})
    assert r.status_code == 415
    r = client.post(PATH, json={"outcomes": [one]})
    assert r.status_code == 401 and "Authorization: Bearer" in r.json()["error"]
    assert parts.outcomes is not None and parts.outcomes.rows == 0


@pytest.mark.parametrize(("params", "named"), [
    ({"after": "-1"}, "invalid parameter 'after': -1 is outside"),
    ({"after": "x"}, "invalid parameter 'after': 'x' is not an integer"),
    ({"limit": "0"}, "invalid parameter 'limit': 0 is outside 1..50"),
    ({"limit": "51"}, "invalid parameter 'limit': 51 is outside 1..50"),
])
def test_bad_page_parameters_answer_400(api: tuple[TestClient, ServerParts, SimulatedClock],
                                        params: dict[str, str], named: str) -> None:
    client, _, _ = api
    r = client.get(PATH, params=params)
    assert r.status_code == 400 and named in r.json()["error"], r.text


def test_the_openapi_document_lists_both_methods(api: tuple[TestClient, ServerParts, SimulatedClock]) -> None:
    client, _, _ = api
    doc = client.get("/api/openapi.json").json()["paths"][PATH]
    assert set(doc) == {"get", "post"} and doc["post"]["security"] == [{"bearer": []}]


def test_a_resent_outcome_is_stored_once(api: tuple[TestClient, ServerParts, SimulatedClock]) -> None:
    # rule: (request_id, model) names one outcome: a retry or a duplicate in the batch adds nothing
    # (before: every copy was stored, and a label poller joined it twice)
    client, _, _ = api
    body = {"outcomes": [{"request_id": "r1", "label": 1}, {"request_id": "r1", "label": 1},
                         {"request_id": "r1", "label": 0, "model": "ctr"}]}
    first = client.post(PATH, json=body, headers=AUTH).json()["data"]
    assert first == {"stored": 2, "first": 1, "last": 2}
    again = client.post(PATH, json=body, headers=AUTH).json()["data"]
    assert again["stored"] == 0
    page = client.get(PATH, params={"after": 0}).json()["data"]
    assert [(o["request_id"], o["model"]) for o in page["outcomes"]] == [("r1", ""), ("r1", "ctr")]
