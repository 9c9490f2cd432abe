"""The recorder: bounded, never blocking, exact below capacity, every drop counted."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import numpy as np
import pytest
from sdk_fakes import FailingAggregator, GateAggregator, RecordingAggregator

from inferwatch import ConfigError
from inferwatch.config import SdkConfig
from inferwatch.model import SimulatedClock
from inferwatch.sdk import MAX_ROUTES, OTHER_ROUTE, Monitor

SVC = {"service": "svc", "model": "m", "version": "v1"}


def total(monitor: Monitor, route: str = "/p", code: str = "200") -> float | None:
    return monitor.get_sample_value("inferwatch_requests_total", {**SVC, "route": route, "code": code})


def dropped(monitor: Monitor, kind: str = "request") -> float | None:
    return monitor.get_sample_value("inferwatch_sdk_dropped_total", {"service": "svc", "kind": kind})


@pytest.fixture
def held() -> Iterator[tuple[Monitor, GateAggregator]]:
    """A monitor whose worker is parked inside an aggregator, with a queue of 10."""
    gate = GateAggregator()
    monitor = Monitor("svc", "m", "v1", config=SdkConfig(queue_size=10), aggregators=[gate])
    monitor.observe("gate", None)
    assert gate.entered.wait(60)
    yield monitor, gate
    gate.release.set()
    monitor.close()


def test_nothing_lost_at_capacity(held: tuple[Monitor, GateAggregator]) -> None:
    monitor, gate = held
    for _ in range(10):
        monitor.record_request("/p", 200, 0.01)
    gate.release.set()
    assert total(monitor) == 10.0
    assert dropped(monitor) == 0.0


def test_every_drop_above_capacity_is_counted(held: tuple[Monitor, GateAggregator]) -> None:
    monitor, gate = held
    for _ in range(25):
        monitor.record_request("/p", 200, 0.01)
    gate.release.set()
    assert total(monitor) == 10.0
    assert dropped(monitor) == 15.0


def test_drops_are_counted_per_kind(held: tuple[Monitor, GateAggregator]) -> None:
    monitor, gate = held
    for _ in range(12):
        monitor.observe("gate", None)
    gate.release.set()
    assert dropped(monitor, "gate") == 2.0


def test_eight_producers_add_up_exactly() -> None:
    n, threads = 5_000, 8
    with Monitor("svc", "m", "v1", config=SdkConfig(queue_size=n * threads + 16)) as monitor:
        start = threading.Barrier(threads)

        def produce(i: int) -> None:
            start.wait(10)
            for k in range(n):
                monitor.record_request(f"/r{i % 2}", 200 if k % 10 else 500, 0.001 * (k % 7))

        workers = [threading.Thread(target=produce, args=(i,)) for i in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
        counts = [total(monitor, f"/r{r}", c) for r in (0, 1) for c in ("200", "500")]
        assert counts == [18_000.0, 2_000.0, 18_000.0, 2_000.0]
        assert dropped(monitor) == 0.0


def test_flush_sees_everything_recorded_before_it() -> None:
    with Monitor("svc", "m", "v1") as monitor:
        for i in range(1, 201):
            monitor.record_request("/p", 200, 0.001)
            if i % 50 == 0:
                assert monitor.flush(10)
                assert total(monitor) == float(i)


@pytest.mark.parametrize(
    ("route", "status", "duration"),
    [
        ("/p", 200, -0.001),          # negative duration
        ("/p", 200, float("nan")),    # NaN duration
        ("/p", 200, float("inf")),    # infinite duration
        ("/p", 200, "0.1"),           # duration not a number
        ("/p", "200", 0.1),           # status not an int
        ("/p", True, 0.1),            # bool is not a status code
        ("/p", 99, 0.1),              # status below 100
        ("/p", 600, 0.1),             # status above 599
        (None, 200, 0.1),             # route not a string
    ],
)
def test_bad_input_is_counted_and_dropped_never_raised(
    route: object, status: object, duration: object,
) -> None:
    with Monitor("svc", "m", "v1") as monitor:
        monitor.record_request(route, status, duration)  # type: ignore[arg-type]
        monitor.record_request("/p", 200, 0.5)
        assert total(monitor) == 1.0
        invalid = {"service": "svc", "kind": "request"}
        assert monitor.get_sample_value("inferwatch_sdk_invalid_total", invalid) == 1.0


def test_close_is_idempotent_and_later_records_are_drops() -> None:
    monitor = Monitor("svc", "m", "v1")
    monitor.record_request("/p", 200, 0.01)
    monitor.close()
    monitor.close()
    monitor.record_request("/p", 200, 0.01)
    assert total(monitor) == 1.0
    assert dropped(monitor) == 1.0
    assert "closed" in repr(monitor)


def test_track_times_the_block_on_the_injected_clock_and_counts_exceptions_as_500() -> None:
    clock = SimulatedClock(100.0)
    with Monitor("svc", "m", "v1", clock=clock) as monitor:
        with monitor.track("/p"):
            assert monitor.get_sample_value("inferwatch_inflight_requests", SVC) == 1.0
            clock.advance(0.3)
        with pytest.raises(KeyError), monitor.track("/p"):
            raise KeyError("x")
        with monitor.track("/p") as t:
            t.status = 503
        assert total(monitor, code="500") == 1.0
        assert total(monitor, code="503") == 1.0
        labels = {**SVC, "route": "/p"}
        seconds = monitor.get_sample_value("inferwatch_request_duration_seconds_sum", labels)
        assert seconds == pytest.approx(0.3)
        assert monitor.get_sample_value("inferwatch_inflight_requests", SVC) == 0.0


def test_a_failing_aggregator_is_logged_and_the_worker_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    bad = FailingAggregator()
    logs = caplog.at_level(logging.ERROR, logger="inferwatch.sdk")
    with logs, Monitor("svc", aggregators=[bad]) as monitor:
        monitor.observe_prediction({"x": 1.0})
        monitor.record_request("/p", 200, 0.01)
        text = monitor.metrics_text()
        monitor.observe_prediction({"x": 2.0})
        monitor.flush()
    assert bad.calls == 2
    assert 'route="/p"' in text
    assert any("RuntimeError: boom" in (r.exc_text or "") for r in caplog.records)


def test_aggregators_get_their_kinds_with_the_clock_time() -> None:
    clock = SimulatedClock(1234.0)
    rec = RecordingAggregator("prediction", "outcome")
    with Monitor("svc", clock=clock) as monitor:
        monitor.observe_outcome("exp", "a", 1)  # before attach: no consumer, ignored
        monitor.attach(rec)
        monitor.observe_prediction({"x": 1.0}, confidence=0.9)
        monitor.observe_outcome("exp", "b", 1)
        monitor.observe_outcome("exp", "b", [1, 2])  # truthy list: converted=True
        monitor.flush()
        assert rec.seen["prediction"] == [({"x": 1.0}, 0.9, None)]
        assert rec.seen["outcome"] == [("exp", "b", True), ("exp", "b", True)]
        assert rec.nows and set(rec.nows) == {1234.0}
        assert monitor.get_sample_value("test_payloads", {"kind": "outcome"}) == 2.0


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"service": ""}, "service must not be empty"),      # service label required
        ({"service": "s", "model": 3}, "model must be a string"),  # labels are strings
    ],
)
def test_constructor_errors_are_typed(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        Monitor(**kwargs)  # type: ignore[arg-type]


def test_attach_refuses_a_non_aggregator() -> None:
    with Monitor("svc") as monitor, pytest.raises(ConfigError, match="does not implement Aggregator"):
        monitor.attach(object())  # type: ignore[arg-type]


@pytest.mark.parametrize("n", [5, 500])  # the plain-Python path and the numpy path
def test_mixed_batches_count_invalid_rows_and_accept_numpy_numbers(n: int) -> None:
    gate = GateAggregator()
    with Monitor("svc", "m", "v1", aggregators=[gate]) as monitor:
        monitor.observe("gate", None)
        assert gate.entered.wait(60)
        for i in range(n):  # queued together, so aggregated as one batch
            monitor.record_request("/p", 200, 0.01)
            monitor.record_request("/p", np.int64(503), np.float32(0.5))  # numpy scalars are fine
            monitor.record_request("/p", 200, float("nan") if i % 2 else -1.0)  # invalid
        gate.release.set()
        assert total(monitor) == float(n)
        assert total(monitor, code="503") == float(n)
        invalid = {"service": "svc", "kind": "request"}
        assert monitor.get_sample_value("inferwatch_sdk_invalid_total", invalid) == float(n)
        labels = {**SVC, "route": "/p"}
        assert monitor.get_sample_value("inferwatch_request_duration_seconds_sum", labels) == pytest.approx(
            0.51 * n)


def test_routes_beyond_the_limit_fold_into_other() -> None:
    with Monitor("svc", "m", "v1") as monitor:
        for i in range(MAX_ROUTES + 50):
            monitor.record_request(f"/r{i}", 200, 0.01)
        assert total(monitor, "/r0") == 1.0
        assert total(monitor, OTHER_ROUTE) == 51.0  # MAX_ROUTES - 1 own series, the rest in one
        assert total(monitor, f"/r{MAX_ROUTES + 10}") is None
