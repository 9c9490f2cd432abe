"""An agent on loopback ships to a real `inferwatch serve`; the ingest endpoint validates, authenticates."""

from __future__ import annotations

import gzip
import json
import math
import time
from pathlib import Path

import httpx
import pytest

from inferwatch.edge import Agent, Batch, Deadband, DeadbandSettings, IngestTarget, encode_batch
from inferwatch.edge._http import HttpClient
from inferwatch.model import Labels, Sample, SimulatedClock

from .helpers import TOKEN, ScriptedSource, agent_config, assert_served, read_store, serve, served

pytestmark = pytest.mark.slow
T0 = math.floor(time.time() / 86400) * 86400 - 86400  # yesterday 00:00: inside the server's retention


def _wave(name: str, t: float) -> float:
    # a slow ramp with a step: quiet stretches (heartbeats) and moves (deadband sends)
    return 50.0 + (t - T0) / 120.0 + (20.0 if (t - T0) > 1800 else 0.0) + (0.3 if name.endswith("b") else 0.0)


def test_agent_ships_to_serve_exactly_what_the_deadband_sent(tmp_path: Path) -> None:
    # rule: every sample the deadband passes is stored once on the server, with device="cam-1",
    # and the points between them at the device's step, the last value holding (format 3); nothing
    # else of the series is stored (one simulated hour at 15 s, two series)
    clock = SimulatedClock(T0)
    src = ScriptedSource(_wave, names=("temp_a", "temp_b"))
    with serve(tmp_path) as (url, _):
        agent = Agent(agent_config(tmp_path, url), clock=clock, sources=[src])
        for _ in range(240):
            agent.collect_once()
            clock.advance(15)
        agent.uploader.drain()
        assert agent.spool.backlog() == 0
        devices = httpx.get(f"{url}/api/v1/edge/devices", timeout=10).json()["data"]
        assert [d["backlog"] for d in devices if d["device"] == "cam-1"] == [0]  # not the batch in flight
        agent.close()
    expected = Deadband(DeadbandSettings())
    want = [s for k in range(240) for n in ("temp_a", "temp_b")
            for s in expected.offer(Sample(Labels.of(n), T0 + 15 * k, _wave(n, T0 + 15 * k)))]
    got = read_store(tmp_path / "data", '{__name__=~"temp_.*"}')
    assert sorted(got) == ['temp_a{device="cam-1"}', 'temp_b{device="cam-1"}']
    assert_served(got, want, 15.0)
    assert got['temp_a{device="cam-1"}'][-1][0] > T0 + 3315  # the quiet tail held up to the last batch
    want_got = served(want, 15.0)
    assert len(want_got['temp_a{device="cam-1"}']) == 3315 // 15 + 1  # every point up to the last sent
    # per series 240 points, 13 sent: the ramp (+2.5 per 5 min) never leaves the 10 % band, so the
    # first point, the step at 30 min, and heartbeats every 5 min in between
    assert [s.t - T0 for s in want if s.labels.name == "temp_a"] == [
        0, 300, 600, 900, 1200, 1500, 1800, 1815, 2115, 2415, 2715, 3015, 3315]


def _post(url: str, body: bytes, token: str | None = TOKEN, **headers: str) -> httpx.Response:
    h = {"Content-Encoding": "gzip", **headers}
    if token is not None:
        h["Authorization"] = f"Bearer {token}"
    return httpx.post(f"{url}/api/v1/edge/ingest", content=body, headers=h, timeout=10)


def _body(doc: object) -> bytes:
    return gzip.compress(json.dumps(doc).encode())


def test_ingest_validates_limits_and_authenticates(tmp_path: Path) -> None:
    # rule: each bad request gets its status and a message naming what and where; never a 500;
    # a retried batch id is stored once; the token is never echoed
    pts = (Sample(Labels.of("x"), T0, 1.0), Sample(Labels.of("x"), T0 + 15, 2.0))
    good = Batch("cam-1", "s:1-2", pts, 300.0)
    with serve(tmp_path) as (url, _proc):
        assert _post(url, encode_batch(good), token=None).status_code == 401
        assert _post(url, encode_batch(good), token="wrong").status_code == 401
        r = _post(url, encode_batch(Batch("cam-2", "s:1-2", good.samples, 300.0)))
        assert (r.status_code, "body.device" in r.json()["error"]) == (403, True)
        r = _post(url, b"not gzip")
        assert r.status_code == 400 and "not gzip" in r.json()["error"]
        doc = json.loads(gzip.decompress(encode_batch(good)))
        doc["series"][0]["v"][1] = "high"
        r = _post(url, _body(doc))
        assert (r.status_code, r.json()["error"]) == (400, "body.series[0].v[1]: 'high' is not a number")
        doc["series"][0]["labels"]["__name__"] = "1bad"
        assert "body.series[0].labels.__name__" in _post(url, _body(doc)).json()["error"]
        r = _post(url, b"\x1f\x8b" + b"\0" * (5 << 20))
        assert r.status_code == 413
        bomb = gzip.compress(b" " * (65 << 20))  # 65 MiB of spaces: over the decoded limit
        r = _post(url, bomb)
        assert r.status_code == 400 and "decompressed" in r.json()["error"]
        assert _post(url, encode_batch(good)).json() == {"status": "success", "batch": "s:1-2", "samples": 2}
        again = _post(url, encode_batch(good)).json()
        assert again == {"status": "duplicate", "batch": "s:1-2", "samples": 0}
        devices = httpx.get(f"{url}/api/v1/edge/devices", timeout=5).json()["data"]
        assert [(d["device"], d["samples"], d["batches"], d["duplicates"]) for d in devices] == [
            ("cam-1", 2, 1, 1)]
    assert read_store(tmp_path / "data", "x") == {'x{device="cam-1"}': [(T0, 1.0), (T0 + 15, 2.0)]}


class _Recording(HttpClient):
    """The real network, recording each answer's status."""

    def __init__(self) -> None:
        super().__init__()
        self.statuses: list[int] = []

    def request(self, method: str, url: str, body: bytes | None,
                headers: dict[str, str]) -> tuple[int, bytes]:
        status, answer = super().request(method, url, body, headers)
        self.statuses.append(status)
        return status, answer


def test_a_server_that_lost_the_series_dictionary_gets_it_again(tmp_path: Path) -> None:
    # rule: version 2 names series by id after the first acknowledged batch; a server without
    # the definitions (a new data dir) answers 409 once and the agent resends that batch, same id,
    # with every definition: nothing lost, nothing stored twice
    from .helpers import _free_port

    clock, link, port = SimulatedClock(T0), _Recording(), _free_port()
    src = ScriptedSource(_wave, names=("temp_a", "temp_b"))
    agent = None
    with serve(tmp_path, port=port, data="data") as (url, _):
        agent = Agent(agent_config(tmp_path, url), clock=clock, sources=[src],
                      target=IngestTarget(url, "cam-1", TOKEN, transport=link))
        for _ in range(120):
            agent.collect_once()
            clock.advance(15)
        agent.uploader.drain()
        first = len(link.statuses)
        assert set(link.statuses) == {200} and first >= 1
    with serve(tmp_path, port=port, data="data2") as (url, _):
        for _ in range(120):
            agent.collect_once()
            clock.advance(15)
        agent.uploader.drain()
        assert agent.spool.backlog() == 0
        agent.close()
    assert link.statuses[first:first + 2] == [409, 200] and set(link.statuses[first + 2:]) <= {200}
    expected = Deadband(DeadbandSettings())
    want = [s for k in range(240) for n in ("temp_a", "temp_b")
            for s in expected.offer(Sample(Labels.of(n), T0 + 15 * k, _wave(n, T0 + 15 * k)))]
    before = read_store(tmp_path / "data", '{__name__=~"temp_.*"}')
    after = read_store(tmp_path / "data2", '{__name__=~"temp_.*"}')
    # each server filled in the gaps of what it received (the second one from its first sample on)
    assert_served(before, [s for s in want if s.t < T0 + 15 * 120], 15.0)
    assert_served(after, [s for s in want if s.t >= T0 + 15 * 120], 15.0)
