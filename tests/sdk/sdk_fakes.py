"""Hand-written aggregators for the SDK tests."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric


class GateAggregator:
    """Holds the worker inside ``consume`` until released: makes queue filling deterministic."""

    kinds = ("gate",)

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        self.entered.set()
        assert self.release.wait(30), "test never released the gate"

    def collect(self, now: float) -> Iterable[Metric]:
        return ()


class RecordingAggregator:
    """Keeps every payload it is given and exposes their count as a gauge."""

    def __init__(self, *kinds: str) -> None:
        self.kinds = kinds
        self.seen: dict[str, list[Any]] = {k: [] for k in kinds}
        self.nows: list[float] = []

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        self.seen[kind].extend(payloads)
        self.nows.append(now)

    def collect(self, now: float) -> Iterable[Metric]:
        g = GaugeMetricFamily("test_payloads", "payloads seen", labels=("kind",))
        for kind, items in sorted(self.seen.items()):
            g.add_metric((kind,), len(items))
        yield g


class FailingAggregator:
    """Raises on every call: the worker must log and go on."""

    kinds = ("prediction",)

    def __init__(self) -> None:
        self.calls = 0

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        self.calls += 1
        raise RuntimeError("boom")

    def collect(self, now: float) -> Iterable[Metric]:
        raise RuntimeError("boom in collect")
