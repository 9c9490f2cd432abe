"""The scrape loop against a real loopback target, on a simulated clock."""

from __future__ import annotations

import threading
import time

from inferwatch.config import ScrapeTarget
from inferwatch.model import Dimension, Labels, Priority, SimulatedClock
from inferwatch.server import ScrapeLoop
from inferwatch.store import MemoryStore, parse_selector, stale_mask

from .conftest import FakeTarget


def _loop(target: FakeTarget, **kw: object) -> tuple[ScrapeLoop, MemoryStore, SimulatedClock]:
    clock = SimulatedClock(1000.0)
    store = MemoryStore()
    cfg = ScrapeTarget(job="svc", url=target.url, **kw)  # type: ignore[arg-type]
    return ScrapeLoop([cfg], store, clock=clock), store, clock


def _points(store: MemoryStore, sel: str) -> dict[str, list[tuple[float, str]]]:
    out = {}
    for s in store.select(parse_selector(sel), 0, 1e12):
        marks = stale_mask(s.v)
        rows = zip(s.t.tolist(), s.v.tolist(), marks.tolist(), strict=True)
        out[str(s.labels)] = [(t, "stale" if m else repr(v)) for t, v, m in rows]
    return out


def test_samples_get_job_instance_and_scrape_time(target: FakeTarget) -> None:
    target.body = '# TYPE req_total counter\nreq_total{code="200"} 7\n'
    loop, store, _ = _loop(target)
    loop.scrape_once(1000.0)
    inst = target.url.split("/")[2]
    tail = f'instance="{inst}",job="svc"}}'
    assert _points(store, "req_total") == {f'req_total{{code="200",{tail}': [(1000.0, "7.0")]}
    assert _points(store, "up") == {f"up{{{tail}": [(1000.0, "1.0")]}
    assert _points(store, "scrape_samples_scraped")[f"scrape_samples_scraped{{{tail}"] == [(1000.0, "1.0")]
    (h,) = loop.targets()
    assert (h.health, h.last_scrape, h.samples) == ("up", 1000.0, 1)


def test_disappearing_series_is_marked_stale_at_the_scrape_time(target: FakeTarget) -> None:
    # Prometheus: a series in the previous scrape and absent now gets a staleness marker.
    loop, store, _ = _loop(target)
    target.body = "a 1\nb 2\n"
    loop.scrape_once(1000.0)
    target.body = "a 3\n"
    loop.scrape_once(1015.0)
    got = _points(store, '{__name__=~"a|b"}')
    assert [v for k, v in got.items() if k.startswith("b{")] == [[(1000.0, "2.0"), (1015.0, "stale")]]
    assert [v for k, v in got.items() if k.startswith("a{")] == [[(1000.0, "1.0"), (1015.0, "3.0")]]


def test_failed_scrape_sets_up_0_and_marks_everything_stale(target: FakeTarget) -> None:
    loop, store, _ = _loop(target)
    target.body = "a 1\n"
    loop.scrape_once(1000.0)
    target.status = 500
    loop.scrape_once(1015.0)
    assert [v for v in _points(store, "up").values()] == [[(1000.0, "1.0"), (1015.0, "0.0")]]
    assert list(_points(store, "a").values()) == [[(1000.0, "1.0"), (1015.0, "stale")]]
    (h,) = loop.targets()
    assert h.health == "down" and "500" in h.last_error


def test_parse_error_fails_the_scrape_and_names_the_line(target: FakeTarget) -> None:
    loop, store, _ = _loop(target)
    target.body = "a 1\nb{x=} 2\n"
    loop.scrape_once(1000.0)
    (h,) = loop.targets()
    assert h.health == "down" and "line 2" in h.last_error
    assert list(_points(store, "up").values()) == [[(1000.0, "0.0")]]
    assert _points(store, "a") == {}


def test_unreachable_target_is_down(target: FakeTarget) -> None:
    clock = SimulatedClock(1000.0)
    store = MemoryStore()
    loop = ScrapeLoop([ScrapeTarget(job="x", url="http://127.0.0.1:1/metrics")], store, clock=clock)
    loop.scrape_once()
    assert loop.targets()[0].health == "down"
    assert list(_points(store, "up").values()) == [[(1000.0, "0.0")]]
    loop.stop()


def test_timeout_fails_the_scrape(target: FakeTarget) -> None:
    target.delay = threading.Event()
    loop, _store, _ = _loop(target, timeout=0.2, interval=1.0)
    loop.scrape_once(1000.0)
    assert "deadline" in loop.targets()[0].last_error
    target.delay.set()
    loop.stop()


def test_explicit_timestamps_honoured_and_exempt_from_staleness(target: FakeTarget) -> None:
    loop, store, _ = _loop(target)
    target.body = "a 1 990000\nb 2\n"
    loop.scrape_once(1000.0)
    target.body = "\n"
    loop.scrape_once(1015.0)
    got = _points(store, '{__name__=~"a|b"}')
    assert [v for k, v in got.items() if k.startswith("a{")] == [[(990.0, "1.0")]]
    assert [v for k, v in got.items() if k.startswith("b{")] == [[(1000.0, "2.0"), (1015.0, "stale")]]


def test_honor_timestamps_false_uses_the_scrape_time(target: FakeTarget) -> None:
    loop, store, _ = _loop(target, honor_timestamps=False)
    target.body = "a 1 990000\n"
    loop.scrape_once(1000.0)
    assert list(_points(store, "a").values()) == [[(1000.0, "1.0")]]


# (rule, honor_labels, expected label set of the exposed series)
LABEL_CASES = [
    ("conflicting target labels win; the exposed one becomes exported_", False,
     {"__name__": "a", "job": "svc", "exported_job": "other"}),
    ("honor_labels keeps the exposed value", True, {"__name__": "a", "job": "other"}),
]


def test_label_conflicts(target: FakeTarget) -> None:
    for rule, honor, want in LABEL_CASES:
        loop, store, _ = _loop(target, honor_labels=honor)
        target.body = 'a{job="other"} 1\n'
        loop.scrape_once(1000.0)
        (s,) = store.select(parse_selector("a"), 0, 2000)
        assert s.labels.without("instance") == Labels(want), rule


def test_tick_follows_per_target_intervals(target: FakeTarget) -> None:
    clock = SimulatedClock(0.0)
    store = MemoryStore()
    fast = ScrapeTarget(job="infra", url=target.url, dimension=Dimension.INFRASTRUCTURE)  # 15 s default
    slow = ScrapeTarget(job="svc", url=target.url + "?x")  # 60 s default (service)
    loop = ScrapeLoop([fast, slow], store, clock=clock)
    target.body = "a 1\n"
    scraped = [loop.tick(float(t)) for t in range(0, 61, 15)]
    assert scraped == [2, 1, 1, 1, 2]
    loop.stop()


def test_threads_scrape_and_stop(target: FakeTarget) -> None:
    # Real threads on a simulated clock: clock.wait advances time, so the loop runs without sleeping.
    loop, store, _clock = _loop(target, interval=15.0)
    target.body = "a 1\n"
    loop.start()
    end = time.monotonic() + 60  # bounded by time: 500 polls were 5 s, which a loaded runner can outlast
    while target.requests < 3 and time.monotonic() < end:
        threading.Event().wait(0.01)
    loop.stop()
    assert target.requests >= 3
    assert len(store.select(parse_selector("up"), 0, 1e12)[0]) >= 3


def test_a_big_parse_steps_aside_while_a_rule_round_runs(target: FakeTarget) -> None:
    # rule (issue 46): a 20,000-line body is parsed a block at a time, and between blocks the scrape
    # waits while a rule round holds the server's Priority (serve hands the loop its wait_turn); it
    # stores everything once the round is done
    target.body = "".join(f'g{{k="{i}"}} {i}\n' for i in range(20_000))
    loop, store, _ = _loop(target)
    prio = Priority(max_wait=60.0)
    loop.yield_to = prio.wait_turn
    with prio.first():
        th = threading.Thread(target=loop.scrape_once, daemon=True)
        th.start()
        th.join(0.5)
        assert th.is_alive() and not store.series(parse_selector("g"))  # waiting at a block's end
    th.join(60)
    assert not th.is_alive() and len(store.series(parse_selector("g"))) == 20_000
    loop.stop()
