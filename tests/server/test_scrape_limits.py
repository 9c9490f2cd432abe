"""Issue 21 #3 and #4: a scrape has a total deadline and Prometheus's limits; ingest refuses poison."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from inferwatch.config import ScrapeTarget
from inferwatch.model import SimulatedClock, SystemClock
from inferwatch.server import ScrapeLoop
from inferwatch.store import MemoryStore, parse_selector

from .conftest import FakeTarget


def _loop(url: str, clock: SimulatedClock | SystemClock | None = None,
          **kw: object) -> tuple[ScrapeLoop, MemoryStore]:
    store = MemoryStore()
    cfg = ScrapeTarget(job="svc", url=url, **kw)  # type: ignore[arg-type]
    return ScrapeLoop([cfg], store, clock=clock or SimulatedClock(1000.0)), store


def _up(store: MemoryStore) -> list[float]:
    return [float(v) for s in store.select(parse_selector("up"), 0, 1e12) for v in s.v]


@pytest.fixture
def dribbler() -> Iterator[str]:
    """A target that sends its headers, then one byte every 50 ms until the client goes away."""
    gone = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.end_headers()
            try:
                for _ in range(600):  # 30 s at most
                    self.wfile.write(b"#")
                    self.wfile.flush()
                    if gone.wait(0.05):
                        return
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    th = threading.Thread(target=server.serve_forever, daemon=True)
    th.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/metrics"
    gone.set()
    server.shutdown()
    server.server_close()
    th.join(10)


@pytest.mark.slow
def test_the_timeout_bounds_the_whole_scrape(dribbler: str) -> None:
    # rule: a target dribbling bytes (each read well within the timeout) is cut at the deadline
    loop, store = _loop(dribbler, SystemClock(), interval=1.0, timeout=1.0)
    loop.scrape_once()
    loop.stop()
    (h,) = loop.targets()
    assert h.health == "down" and "context deadline exceeded" in h.last_error
    # about one read past the 1 s deadline (it took 30 s before); 5 s leaves a loaded runner room
    assert h.last_duration < 5.0
    assert _up(store) == [0.0]


@pytest.mark.parametrize(("body", "limits", "reason"), [
    ("a 1\n" * 300_000, {"body_size_limit": "1MB"}, "body size limit exceeded"),
    ("a 1\nb 1\nc 1\n", {"sample_limit": 2}, "sample limit exceeded (samples: 3, limit: 2)"),
    ('a{x="1",y="2"} 1\n', {"label_limit": 4}, "label_limit exceeded (metric: a, number of labels: 5"),
    ('a{long_name="1"} 1\n', {"label_name_length_limit": 8}, "label_name_length_limit exceeded"),
    ('a{x="0123456789"} 1\n', {"label_value_length_limit": 9}, "label_value_length_limit exceeded"),
])
def test_a_scrape_past_a_limit_fails_with_the_reason(
        target: FakeTarget, body: str, limits: dict[str, object], reason: str) -> None:
    target.body = body
    loop, store = _loop(target.url, **limits)
    loop.scrape_once(1000.0)
    loop.stop()
    (h,) = loop.targets()
    assert (h.health, h.samples) == ("down", 0) and reason in h.last_error, h.last_error
    assert _up(store) == [0.0]
    assert store.select(parse_selector("a"), 0, 1e12) == []  # nothing of the scrape was kept
    if "size" not in reason:  # the body was parsed: its samples count as discarded, by the limit's name
        name = reason.split(" exceeded")[0].replace(" ", "_")
        assert set(store.stats.discarded) == {name} and store.stats.discarded[name] >= 1


def test_a_far_future_sample_is_refused_and_does_not_poison_its_series(target: FakeTarget) -> None:
    # rule: as Prometheus's appender, a sample stamped more than 10m ahead is out of bounds
    loop, store = _loop(target.url)
    target.body = f"a 1 {(1000 + 3600) * 1000}\nb 1\n"
    loop.scrape_once(1000.0)
    (h,) = loop.targets()
    assert h.health == "up" and "1 samples out of bounds" in h.last_error
    target.body = f"a 2 {1015 * 1000}\nb 2\n"
    loop.scrape_once(1015.0)
    loop.stop()
    (a,) = store.select(parse_selector("a"), 0, 1e12)
    assert a.t.tolist() == [1015.0] and a.v.tolist() == [2.0]  # the later sample got in
    assert loop.targets()[0].last_error == ""


@pytest.mark.parametrize(("body", "reason"), [
    ("a 1\na 2\n", 'duplicate sample for timestamp: series a{instance='),
    ('x{c="1"} 1\nx{c="1"} 1\n', "exposed more than once"),
    ("# TYPE a gauge\na 1\n# TYPE a counter\nb 2\n", "second TYPE line for metric name 'a'"),
])
def test_a_repeated_series_or_type_is_a_scrape_error(target: FakeTarget, body: str, reason: str) -> None:
    target.body = body
    loop, store = _loop(target.url)
    loop.scrape_once(1000.0)
    loop.stop()
    (h,) = loop.targets()
    assert h.health == "down" and reason in h.last_error, h.last_error
    assert _up(store) == [0.0]


def test_a_scrape_url_with_credentials_never_shows_them(target: FakeTarget,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    # rule: a target URL's ?token= appears neither in the targets API's error nor in the log (httpx
    # quotes the URL whole in its messages); user:pass@ is refused in the config (test_scrape_auth.py)
    target.status, target.body = 500, "oops"
    url = target.url + "?token=tok-s3cret"
    loop, store = _loop(url)
    with caplog.at_level("DEBUG"):
        loop.scrape_once()
    (h,) = loop.targets()
    assert h.health == "down" and "500" in h.last_error
    shown = h.last_error + h.url + caplog.text
    assert "tok-s3cret" not in shown, shown
    assert _up(store) == [0.0]
