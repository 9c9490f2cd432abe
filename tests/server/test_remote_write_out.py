"""Remote-write out: the queue's log and one remote's sender, on a simulated clock, to a loopback receiver."""

from __future__ import annotations

import hashlib
import http.server
import itertools
import logging
import random
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from inferwatch import ConfigError
from inferwatch.config import RemoteWriteSpec, parse_config
from inferwatch.edge import decode_write_request
from inferwatch.model import STALE_NAN, Labels, SimulatedClock
from inferwatch.server import ServerComponents
from inferwatch.server.remote._remote_write_out import RemoteSender, TeeStore, backoff_delay
from inferwatch.server.remote._rw_wal import RemoteWAL
from inferwatch.store import MemoryStore, append_columns

from .conftest import FakeTarget

UP = Labels.of("up", job="api", instance="a:1")
Point = tuple[Labels, float, float]
RPS = Labels.of("requests_per_second", job="api", instance="a:1")


@dataclass
class Receiver:
    """A loopback remote-write receiver answering from a script ("drop" closes the connection)."""

    clock: SimulatedClock
    script: list[int | str] = field(default_factory=list)
    url: str = ""
    requests: list[tuple[float, dict[str, str], list[Point]]] = field(default_factory=list)
    statuses: list[int | str] = field(default_factory=list)

    def answered(self) -> list[list[tuple[Labels, float, float]]]:
        """The bodies of the requests answered 2xx."""
        return [body for (_, _, body), status in zip(self.requests, self.statuses, strict=True)
                if status == 204]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver(SimulatedClock(1000.0))

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            samples = [(s.labels, s.t, s.v) for s in decode_write_request(body, max_bytes=1 << 24)]
            status = state.script.pop(0) if state.script else 204
            state.requests.append((state.clock.monotonic(), dict(self.headers.items()), samples))
            state.statuses.append(status)
            if status == "drop":
                self.close_connection = True
                self.connection.close()
                return
            assert isinstance(status, int)
            self.send_response(status)
            self.send_header("Content-Length", "7")
            self.end_headers()
            self.wfile.write(b"nope :(")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    th = threading.Thread(target=server.serve_forever, daemon=True)
    th.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/api/v1/write"
    yield state
    server.shutdown()
    server.server_close()
    th.join(10)


def _spec(receiver: Receiver, **queue: object) -> RemoteWriteSpec:
    return RemoteWriteSpec.model_validate({"url": receiver.url, "name": "r1", "bearer_token": "tok-123",
                                           "headers": {"X-Scope-OrgID": "team-a"},
                                           "queue": {"batch_send_deadline": "5s", **queue}})


def _sender(receiver: Receiver, wal: RemoteWAL, **queue: object) -> RemoteSender:
    return RemoteSender(_spec(receiver, **queue), wal, clock=receiver.clock, user_agent="inferwatch/test",
                        rng=random.Random(7))


def _wal(tmp_path: Path, clock: SimulatedClock) -> RemoteWAL:
    return RemoteWAL(tmp_path / "rw.sqlite", ["r1"], clock=clock)


def _sorted(samples: list[tuple[Labels, float, float]]) -> list[tuple[Labels, float, float]]:
    """A request groups samples by series: compare them in one order."""
    return sorted(samples, key=lambda s: (str(s[0]), s[1]))


def _fill(wal: RemoteWAL, t0: float, n: int) -> list[tuple[Labels, float, float]]:
    """``n`` scrapes of two series, one per second from ``t0``; returns what was logged."""
    out = []
    for k in range(n):
        wal.append_columns([UP, RPS], [t0 + k, t0 + k], [1.0, float(k)])
        out += [(UP, t0 + k, 1.0), (RPS, t0 + k, float(k))]
    return out


def test_a_batch_carries_the_protocol_headers_and_every_sample(tmp_path: Path, receiver: Receiver) -> None:
    wal = _wal(tmp_path, receiver.clock)
    logged = _fill(wal, 100.0, 5)
    sender = _sender(receiver, wal, max_samples_per_send=4)
    while sender.step() == 0.0:  # full batches go at once
        pass
    assert [len(b) for b in receiver.answered()] == [4, 4]
    receiver.clock.advance(5.0)  # the last 2 samples wait for the deadline, then go
    assert sender.step() == 0.0
    assert _sorted([s for b in receiver.answered() for s in b]) == _sorted(logged)
    headers = {k.lower(): v for k, v in receiver.requests[0][1].items()}
    assert headers["content-encoding"] == "snappy"
    assert headers["content-type"] == "application/x-protobuf"
    assert headers["x-prometheus-remote-write-version"] == "0.1.0"
    assert headers["user-agent"] == "inferwatch/test"
    assert headers["authorization"] == "Bearer tok-123"
    assert headers["x-scope-orgid"] == "team-a"
    assert (sender.counts.sent, wal.pending("r1")) == (10, 0)


def test_a_partial_batch_waits_for_the_deadline(tmp_path: Path, receiver: Receiver) -> None:
    wal = _wal(tmp_path, receiver.clock)
    _fill(wal, 100.0, 1)
    sender = _sender(receiver, wal)
    assert sender.step() == pytest.approx(5.0)  # nothing sent yet: 2 of 2000 samples
    receiver.clock.advance(3.0)
    assert sender.step() == pytest.approx(2.0)  # the deadline counts from when the batch opened
    assert receiver.requests == []
    receiver.clock.advance(2.0)
    assert sender.step() == 0.0
    assert len(receiver.requests) == 1


def test_5xx_429_and_network_errors_are_retried_with_exponential_backoff(
        tmp_path: Path, receiver: Receiver) -> None:
    wal = _wal(tmp_path, receiver.clock)
    logged = _fill(wal, 100.0, 3)
    receiver.script = [503, 429, "drop", 500, 500, 500, 500, 500, 500, 500]
    sender = _sender(receiver, wal, max_samples_per_send=6, min_backoff="30ms", max_backoff="1s")
    assert sender.step() == 0.0
    times = [t for t, _, _ in receiver.requests]
    waits = [b - a for a, b in itertools.pairwise(times)]
    assert len(waits) == 10
    for k, w in enumerate(waits):  # between half and all of 30ms * 2**k, never under 30ms, capped at 1s
        base = min(0.03 * 2**k, 1.0)
        assert max(0.03, base / 2) - 1e-9 <= w <= base + 1e-9, (k, w)
    assert waits[-1] >= 0.5  # the cap was reached
    assert all(_sorted(body) == _sorted(logged) for _, _, body in receiver.requests)  # the same batch
    assert (sender.counts.sent, sender.counts.retries, sender.counts.failed) == (6, 10, 0)
    assert wal.pending("r1") == 0


def test_an_outage_is_logged_once_when_it_starts_and_once_when_it_ends(
        tmp_path: Path, receiver: Receiver, caplog: pytest.LogCaptureFixture) -> None:
    # issue 59: an outage was visible only in the pending-samples metric (retries log at info)
    wal = _wal(tmp_path, receiver.clock)
    _fill(wal, 100.0, 3)
    receiver.script = [503, 503, "drop", 500, 204, 503, 204]
    sender = _sender(receiver, wal, max_samples_per_send=6, min_backoff="30ms", max_backoff="1s")
    with caplog.at_level(logging.WARNING, logger="inferwatch.server.remote._remote_write_out"):
        assert sender.step() == 0.0  # four failures, then acknowledged
        _fill(wal, 200.0, 3)
        assert sender.step() == 0.0  # a second outage: one failure, then acknowledged
    said = [r.getMessage() for r in caplog.records]
    assert [("not accepting" in m, "accepting samples again" in m) for m in said] == [
        (True, False), (False, True), (True, False), (False, True)], said
    assert "HTTP 503" in said[0] and "tok-123" not in " ".join(said)


def test_a_long_outage_drops_the_oldest_instead_of_growing_the_backlog(
        tmp_path: Path, receiver: Receiver) -> None:
    wal = _wal(tmp_path, receiver.clock)
    _fill(wal, 100.0, 3)
    receiver.script = [503] * 50
    sender = _sender(receiver, wal, max_samples_per_send=6, max_pending_age="2s", max_backoff="1s",
                     batch_send_deadline="1s")
    assert sender.step() == 0.0  # retried until the batch was older than 2 s, then dropped
    assert 4 <= sender.counts.retries < 15
    assert (sender.counts.dropped, sender.counts.sent, wal.pending("r1")) == (6, 0, 0)
    receiver.script.clear()  # the receiver is back: new samples go
    _fill(wal, 200.0, 1)
    assert sender.step() == pytest.approx(1.0)
    receiver.clock.advance(1.0)
    sender.step()
    assert len(receiver.answered()) == 1 and sender.counts.sent == 2


def test_backoff_jitter_spreads_retries() -> None:
    rng = random.Random(3)
    delays = {round(backoff_delay(4, 0.03, 5.0, rng), 6) for _ in range(50)}
    assert len(delays) > 40 and min(delays) >= 0.24 and max(delays) <= 0.48


def test_4xx_drops_the_batch_counted_as_failed_and_goes_on(tmp_path: Path, receiver: Receiver) -> None:
    wal = _wal(tmp_path, receiver.clock)
    logged = _fill(wal, 100.0, 4)
    receiver.script = [400, 204]
    sender = _sender(receiver, wal, max_samples_per_send=4)
    assert sender.step() == 0.0 and sender.step() == 0.0
    assert receiver.statuses == [400, 204]
    assert [_sorted(b) for b in receiver.answered()] == [_sorted(logged[4:])]  # not retried: the next went
    assert (sender.counts.failed, sender.counts.sent, sender.counts.retries) == (4, 4, 0)
    assert wal.pending("r1") == 0


def test_429_is_dropped_when_retry_on_http_429_is_off(tmp_path: Path, receiver: Receiver) -> None:
    wal = _wal(tmp_path, receiver.clock)
    _fill(wal, 100.0, 1)
    receiver.script = [429]
    sender = _sender(receiver, wal, max_samples_per_send=2, retry_on_http_429=False)
    sender.step()
    assert (sender.counts.failed, sender.counts.retries, len(receiver.requests)) == (2, 0, 1)


def test_after_a_restart_the_batch_in_flight_goes_first_then_the_rest(
        tmp_path: Path, receiver: Receiver) -> None:
    wal = _wal(tmp_path, receiver.clock)
    logged = _fill(wal, 100.0, 4)
    sender = _sender(receiver, wal, max_samples_per_send=3)
    sender.step()  # samples 0..2 acknowledged
    receiver.script = [503]
    sender.request_stop()  # stopping while the next batch is retried: it stays unacknowledged
    assert sender.send(wal.read("r1", 3)) is False  # type: ignore[arg-type]
    assert [_sorted(b) for _, _, b in receiver.requests] == [_sorted(logged[:3]), _sorted(logged[3:6])]
    logged += _fill(wal, 104.0, 3)  # more arrives before the crash
    wal.close()

    again = _wal(tmp_path, receiver.clock)
    assert again.pending("r1") == len(logged) - 3
    resumed = _sender(receiver, again, max_samples_per_send=3)
    while resumed.step() == 0.0:
        pass
    receiver.clock.advance(5.0)
    resumed.step()
    bodies = receiver.answered()
    assert _sorted(bodies[1]) == _sorted(logged[3:6])  # exactly the batch that was in flight, re-sent first
    assert _sorted([s for b in bodies for s in b]) == _sorted(logged)  # then everything after it, once
    assert again.pending("r1") == 0


def test_the_log_keeps_only_what_the_store_accepts(tmp_path: Path) -> None:
    wal = _wal(tmp_path, SimulatedClock(0))
    wal.append_columns([UP, RPS], [10.0, 10.0], [1.0, 5.0])
    wal.append_columns([UP, UP, RPS], [9.0, 10.0, 11.0], [0.0, 1.0, STALE_NAN])  # out of order, repeat, new
    chunk = wal.read("r1", 100)
    assert chunk is not None
    assert [(s.labels, s.t) for s in chunk.samples()] == [(UP, 10.0), (RPS, 10.0), (RPS, 11.0)]
    assert chunk.v[2].tobytes() == np.float64(STALE_NAN).tobytes()  # the staleness marker, bit for bit


def test_the_backlog_is_bounded_by_samples_and_age_oldest_dropped_first(tmp_path: Path) -> None:
    clock = SimulatedClock(0)
    wal = _wal(tmp_path, clock)
    for k in range(10):  # 10 records of 2 samples, 1s apart
        wal.append_columns([UP, RPS], [float(k)] * 2, [1.0, 1.0])
        clock.advance(1.0)
    assert wal.enforce("r1", max_samples=6, max_age=3600) == 14  # the 7 oldest records go
    chunk = wal.read("r1", 100)
    assert chunk is not None and chunk.t.tolist()[0] == 7.0
    clock.advance(100.0)
    assert wal.enforce("r1", max_samples=100, max_age=50) == 6
    assert wal.pending("r1") == 0 and wal.read("r1", 100) is None


def test_the_log_is_trimmed_once_every_remote_has_a_record(tmp_path: Path) -> None:
    wal = RemoteWAL(tmp_path / "rw.sqlite", ["a", "b"], clock=SimulatedClock(0))
    _fill(wal, 0.0, 3)
    a = wal.read("a", 100)
    assert a is not None
    wal.commit("a", a.end)
    assert wal.pending("b") == 6  # b still needs them
    b = wal.read("b", 4)
    assert b is not None
    wal.commit("b", b.end)
    assert (wal.pending("a"), wal.pending("b")) == (0, 2)
    rows = wal._r.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    assert rows == 1  # the two records both have are gone; the one b is half through stays
    wal.close()
    assert RemoteWAL(tmp_path / "rw.sqlite", ["a"], clock=SimulatedClock(0)).pending("a") == 0  # b forgotten


def test_a_failed_append_leaves_no_record_naming_unknown_series(tmp_path: Path) -> None:
    clock = SimulatedClock(0)
    wal = _wal(tmp_path, clock)
    _fill(wal, 0.0, 1)
    big = Labels.of("big", job="api")
    n = 5000
    # a full disk: the new series' row fits in a page already there, the 120 kB record does not
    pages = wal._w.execute("PRAGMA page_count").fetchone()[0]
    wal._w.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(sqlite3.Error, match="full"):
        wal.append_columns([big] * n, [float(k) for k in range(n)], [1.0] * n)
    wal._w.execute("PRAGMA max_page_count = 1073741823")
    wal.append_columns([big] * n, [float(k) for k in range(n)], [2.0] * n)  # all of it: nothing was logged
    wal.close()
    again = _wal(tmp_path, clock)  # the series of every record is known after a restart
    chunk = again.read("r1", 2 * n)
    assert chunk is not None and len(chunk) == n + 2
    assert {s.labels for s in chunk.samples()} == {UP, RPS, big} and chunk.v[-1] == 2.0


def test_the_tee_stores_then_logs_and_a_broken_log_never_fails_the_append(tmp_path: Path) -> None:
    store = MemoryStore()
    wal = _wal(tmp_path, SimulatedClock(0))
    tee = TeeStore(store, wal)
    append_columns(tee, [UP], [1.0], [1.0])
    assert wal.pending("r1") == 1 and len(store.series([])) == 1
    wal.close()  # the log is gone: the store still takes the samples
    append_columns(tee, [UP], [2.0], [1.0])
    assert tee.unlogged == 1
    assert len(store.select([], 0, 10)[0]) == 2


@pytest.mark.parametrize(("remote", "error"), [
    # a header the sender sets itself
    ({"url": "http://h:1/w", "headers": {"Authorization": "Bearer x"}}, "use bearer_token"),
    ({"url": "http://h:1/w", "headers": {"Content-Type": "x"}}, "set by inferwatch"),
    # not an http(s) URL
    ({"url": "ftp://h/w"}, "http:// or https://"),
    # backoff bounds reversed
    ({"url": "http://h:1/w", "queue": {"min_backoff": "10s", "max_backoff": "1s"}}, "above max_backoff"),
    ({"url": "http://h:1/w", "queue": {"max_samples_per_send": 0}}, "max_samples_per_send"),
])
def test_bad_remote_write_config_is_refused_with_the_field(remote: dict[str, object], error: str) -> None:
    import yaml

    with pytest.raises(ConfigError, match=error):
        parse_config(yaml.safe_dump({"server": {"remote_write": [remote]}}))


def test_two_remotes_with_one_queue_name_are_refused() -> None:
    with pytest.raises(ConfigError, match="share the queue name"):
        parse_config("server: {remote_write: [{url: 'http://a:1/w'}, {url: 'http://a:1/w'}]}")


def test_tokens_and_header_values_never_print() -> None:
    cfg = parse_config("server: {remote_write: [{url: 'http://a:1/w', bearer_token: s3cr3t-tok, "
                       "headers: {X-Scope-OrgID: 0rg-s3cr3t}}]}")
    shown = repr(cfg.server.remote_write) + cfg.model_dump_json()
    assert "s3cr3t-tok" not in shown and "0rg-s3cr3t" not in shown
    assert cfg.server.remote_write[0].queue_name == hashlib.sha256(b"http://a:1/w").hexdigest()[:6]


def test_scrapes_are_queued_and_a_reload_keeps_the_queue(tmp_path: Path, receiver: Receiver,
                                                          target: FakeTarget) -> None:
    from inferwatch.server import Server, build_components

    target.body = "model_requests_total 3\n"
    text = (f"server: {{data_dir: '{tmp_path}', remote_write: [{{url: '{receiver.url}', name: r1}}]}}\n"
            f"scrape: {{targets: [{{job: app, url: '{target.url}', interval: 15s}}]}}\n")
    clock = receiver.clock
    server = Server(build_components(parse_config(text), clock=clock), clock=clock)
    try:
        first = server.components
        assert first.remote is not None and isinstance(first.appender, TeeStore)
        first.scrape.tick(clock.now())
        assert first.remote.wal.pending("r1") == 6  # the sample and the 5 report series

        def build() -> ServerComponents:
            return build_components(parse_config(text), clock=clock, store=first.store, remote=first.remote)

        server.reload(build)
        second = server.components
        assert second.remote is first.remote and second.scrape is not first.scrape
        clock.advance(15.0)
        second.scrape.tick(clock.now())
        assert first.remote.wal.pending("r1") == 12  # the old generation's retirement left it open
        sender = first.remote.senders[0]
        while sender.step() == 0.0:
            pass
        clock.advance(5.0)
        sender.step()
        assert sum(map(len, receiver.answered())) == 12
    finally:
        server.stop()
