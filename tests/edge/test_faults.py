"""Faults, each with exact counts: outages of 6 h and of over 24 h, a server restart mid-batch,
a full disk, the clock stepping back. A real agent (in process, on a simulated clock) and a real
`inferwatch serve`; an outage is a transport that refuses to connect."""

from __future__ import annotations

import math
import time
from pathlib import Path

import httpx
import pytest

from inferwatch.edge import Agent, Deadband, DeadbandSettings, IngestTarget, SpoolConfig
from inferwatch.edge._http import HttpClient, TransportError
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.server.ingest._edge_fill import Filler

from .helpers import TOKEN, ScriptedSource, agent_config, assert_served, read_store, serve, served_ok

pytestmark = pytest.mark.slow
T0 = math.floor(time.time() / 3600) * 3600 - 3 * 86400  # three days ago, on the hour


class Link(HttpClient):
    """The real network, which the test can cut (connect errors) or make lose the next answer."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.lose_next_answer = False
        self.refused = 0

    def request(self, method: str, url: str, body: bytes | None,
                headers: dict[str, str]) -> tuple[int, bytes]:
        if self.down:
            self.refused += 1
            raise TransportError("ConnectionRefusedError: network down (test)")
        answer = super().request(method, url, body, headers)
        if self.lose_next_answer:
            self.lose_next_answer = False
            raise TransportError("ConnectionResetError: the answer was lost (test)")
        return answer


def _value(name: str, t: float) -> float:
    return 100.0 + 30.0 * math.sin((t - T0) / 1800.0) + (5.0 if name.endswith("b") else 0.0)


def _agent(tmp: Path, url: str, clock: SimulatedClock, link: Link, **spool: float) -> Agent:
    cfg = agent_config(tmp, url)
    if spool:
        cfg = type(cfg)(cfg.device, SpoolConfig(tmp / "spool.sqlite", **spool), cfg.deadband, cfg.upload)  # type: ignore[arg-type]
    target = IngestTarget(url, "cam-1", TOKEN, transport=link)
    return Agent(cfg, clock=clock, sources=[ScriptedSource(_value, names=("v_a", "v_b"), interval=60)],
                 target=target)


def _expected(rounds: int, step: float) -> list[Sample]:
    db = Deadband(DeadbandSettings())
    return [s for k in range(rounds) for n in ("v_a", "v_b")
            for s in db.offer(Sample(Labels.of(n), T0 + step * k, _value(n, T0 + step * k)))]


def _stored(tmp: Path) -> dict[str, list[tuple[float, float]]]:
    return read_store(tmp / "data", '{__name__=~"v_.*"}')


def newest_of(stored: dict[str, list[tuple[float, float]]], key: str) -> float:
    return stored[key][-1][0] if stored.get(key) else -math.inf


def _split(samples: list[Sample]) -> dict[str, list[tuple[float, float]]]:
    # what the server stores of what was sent: the gaps between sent points filled in at the step
    # (gauges: the last value holds; server/ingest/_edge_fill.py)
    out: dict[str, list[tuple[float, float]]] = {}
    samples = Filler().fill(list(samples), lambda _: False, 60.0, DeadbandSettings().heartbeat_max)
    for s in sorted(samples, key=lambda s: s.t):
        out.setdefault(f'{s.labels.name}{{device="cam-1"}}', []).append((s.t, s.v))
    return out


def test_six_hour_outage_loses_nothing_and_delivers_in_order(tmp_path: Path) -> None:
    clock, link = SimulatedClock(T0), Link()
    with serve(tmp_path) as (url, _):
        agent = _agent(tmp_path, url, clock, link)
        link.down = True
        for _ in range(6 * 60):  # 6 h at 60 s; the uploader tries every round and is refused
            agent.collect_once()
            agent.uploader.step()
            clock.advance(60)
        assert (link.refused, agent.uploader.sent_samples) == (360, 0)
        waiting = agent.spool.backlog()
        link.down = False
        agent.uploader.drain()
        done = (agent.spool.backlog(), agent.spool.dropped()["age"], agent.uploader.sent_samples)
        assert done == (0, 0, waiting)
        agent.close()
    assert_served(_stored(tmp_path), _expected(360, 60), 60.0)


def test_outage_beyond_24_hours_drops_exactly_the_older_samples(tmp_path: Path) -> None:
    clock, link = SimulatedClock(T0), Link()
    rounds = 26 * 60  # 26 h at 60 s
    with serve(tmp_path) as (url, _):
        agent = _agent(tmp_path, url, clock, link)
        link.down = True
        for _ in range(rounds):
            agent.collect_once()
            clock.advance(60)
        end = clock.now() - 60  # the last round's time: the spool's cutoff is end - 24 h
        sent = _expected(rounds + 6, 60)
        older = [s for s in sent if s.t < end - 86400]
        dropped_own = agent.spool.dropped()["age"] - len(older)  # the agent's own series age out too
        assert len(older) > 0 and dropped_own >= 0
        link.down = False
        agent.uploader.drain()
        for _ in range(6):  # back online for 6 minutes: nothing more ages out, a heartbeat reports the total
            agent.collect_once()
            agent.uploader.drain()
            clock.advance(60)
        assert agent.spool.dropped()["age"] == len(older) + dropped_own
        agent.close()
    assert _stored(tmp_path) == _split([s for s in sent if s.t >= end - 86400])
    own = read_store(tmp_path / "data", "inferwatch_edge_spool_dropped_total")
    reported = max(v for pts in own.values() for _, v in pts)
    assert reported == len(older) + dropped_own  # the agent told the server


def test_server_restart_mid_batch_stores_it_once(tmp_path: Path) -> None:
    # the server stores a batch, its answer is lost and it restarts; the agent resends the same
    # batch id and the restarted server recognises it (the ids are kept in data/edge.sqlite)
    from .helpers import _free_port

    clock, link = SimulatedClock(T0), Link()
    port = _free_port()
    with serve(tmp_path, port=port) as (url, _):
        agent = _agent(tmp_path, url, clock, link)
        for _ in range(30):
            agent.collect_once()
            clock.advance(60)
        link.lose_next_answer = True
        assert agent.uploader.step() > 0  # stored there, but the agent saw a lost connection: retry
    with serve(tmp_path, port=port) as (url, _):
        agent.uploader.drain()
        devices = httpx.get(f"{url}/api/v1/edge/devices", timeout=5).json()["data"]
        agent.close()
    # the device's statistics are kept across the restart: the batch stored before it, its resend a duplicate
    assert [(d["batches"], d["duplicates"]) for d in devices] == [(1, 1)]
    assert_served(_stored(tmp_path), _expected(30, 60), 60.0)


def test_full_disk_keeps_the_agent_running_and_counts_drops(tmp_path: Path) -> None:
    # a byte cap of 1,600 bytes (compressed segments): the oldest go first, counted; the spool stays sound
    clock, link = SimulatedClock(T0), Link()
    with serve(tmp_path) as (url, _):
        agent = _agent(tmp_path, url, clock, link, max_bytes=1600)
        link.down = True
        for _ in range(120):
            agent.collect_once()
            clock.advance(60)
        spooled, held = agent.spool.backlog(), agent.spool.stored_bytes()
        link.down = False
        agent.uploader.drain()
        dropped, appended = agent.spool.dropped(), agent.sent
        fleet = httpx.get(f"{url}/api/v1/edge/fleet", timeout=10).json()["data"]["rows"]
        agent.close()
    assert 1600 - 100 < held <= 1600 and 0 < spooled < appended  # within one segment of the cap
    assert (dropped["bytes"], dropped["disk_full"]) == (appended - spooled, 0)
    # the server shows the loss (the fleet page's "dropped"), reported with the next upload
    assert [(r["device"], r["dropped_by_reason"]["bytes"], r["backlog"]) for r in fleet] == [
        ("cam-1", appended - spooled, 0)]
    sent = _expected(120, 60)
    stored = sum(len(v) for v in _stored(tmp_path).values())
    # only the newest survived (the server filled in between them)
    assert stored > 0 and any(served_ok(_stored(tmp_path), sent[-k:], 60.0) for k in range(1, spooled))


class SteppingClock(SimulatedClock):
    """A simulated clock that an NTP correction can set back."""

    def step_back(self, seconds: float) -> None:
        with self._lock:
            self._t -= seconds


def test_clock_stepping_back_neither_stops_nor_reorders_the_agent(tmp_path: Path) -> None:
    # the agent keeps spooling and uploading in spool order; the server keeps the samples before
    # the step, drops the ones now older than what it has (its out-of-order rule), and stores again
    # once time passes the old newest
    clock, link = SteppingClock(T0), Link()
    with serve(tmp_path) as (url, _):
        agent = _agent(tmp_path, url, clock, link)
        for k in range(60):
            if k == 30:
                clock.step_back(1200)  # 20 minutes back
            agent.collect_once()
            agent.uploader.drain()
            clock.advance(60)
        assert (agent.spool.backlog(), agent.uploader.rejected) == (0, 0)
        agent.close()
    db = Deadband(DeadbandSettings())
    times = [T0 + 60 * k - (1200 if k >= 30 else 0) for k in range(60)]
    rounds = [[s for n in ("v_a", "v_b") for s in db.offer(Sample(Labels.of(n), t, _value(n, t)))]
              for t in times]
    sent = [s for r in rounds for s in r]
    newest: dict[Labels, float] = {}
    kept = []
    for s in sent:  # the store's rule: a sample older than the series' newest is dropped
        if s.t > newest.get(s.labels, -math.inf):
            kept.append(s)
            newest[s.labels] = s.t
    assert len(kept) < len(sent)  # the step back did cost the samples the server already had times for
    # the server filled in each round's batch (one per round: drained every round; the agent's own
    # series make every round a batch, its last instant the round's time)
    filler, beat = Filler(), Labels.of("beat", device="cam-1")
    stored: dict[str, list[tuple[float, float]]] = {}
    for t, r in zip(times, rounds, strict=True):
        batch = [Sample(s.labels.with_(device="cam-1"), s.t, s.v) for s in r] + [Sample(beat, t, 0.0)]
        for s in filler.fill(batch, lambda _: False, 60.0, DeadbandSettings().heartbeat_max):
            if s.labels != beat and s.t > newest_of(stored, str(s.labels)):
                stored.setdefault(str(s.labels), []).append((s.t, s.v))
    # (the last round: a batch only if the agent's own series sent something then)
    got = {k: [p for p in v if p[0] < times[-1]] for k, v in _stored(tmp_path).items()}
    assert got == {k: [p for p in v if p[0] < times[-1]] for k, v in stored.items()}
