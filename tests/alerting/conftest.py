"""Fixtures of the alerting tests: loopback fakes and alert builders."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from alerting.fakes import FakeService, Handler
from inferwatch.model import Labels
from inferwatch.rules import Alert


@pytest.fixture
def fake() -> Iterator[Callable[[Handler], FakeService]]:
    started: list[FakeService] = []

    def make(handler: Handler) -> FakeService:
        s = FakeService(handler).start()
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


def alert(name: str = "HighLatency", start: float = 0.0, end: float | None = None, value: float = 1.0,
          **labels: str) -> Alert:
    """An alert as the evaluator sends it (tier P1 service by default)."""
    base = {"alertname": name, "tier": "P1", "severity": "major", "dimension": "service", "service": "ranker"}
    base.update(labels)
    return Alert(Labels(base), {"summary": f"{name} on {base.get('service', '')}"}, start, end, value)
