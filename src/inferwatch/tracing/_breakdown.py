"""Per-stage latency breakdown of stored traces, and which stage's P99 moved between two windows.

A stage is an internal (neither SERVER nor CLIENT) non-root span of the
service (``feature_store``, ``model``...),
named by its span name. ``breakdown`` summarises each stage's durations;
``slowed_stages`` ranks stages by how much their P99 grew from a baseline
window to a recent one, with the slowest recent traces of each as examples.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

__all__ = ["StageShift", "StageStats", "breakdown", "slowed_stages"]

EXAMPLES = 3


@dataclass(frozen=True, slots=True)
class StageStats:
    """One stage over a window: span count, P50 and P99 in seconds, the slowest traces' ids."""

    count: int
    p50_s: float
    p99_s: float
    slowest_traces: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        """JSON shape for the API."""
        return {**asdict(self), "slowest_traces": list(self.slowest_traces)}


@dataclass(frozen=True, slots=True)
class StageShift:
    """How one stage's P99 moved from the baseline window to the recent one."""

    stage: str
    before: StageStats | None
    after: StageStats

    @property
    def p99_increase_s(self) -> float:
        """Recent P99 minus baseline P99 (the whole recent P99 for a stage new in the window)."""
        return self.after.p99_s - (self.before.p99_s if self.before is not None else 0.0)


def breakdown(rows: Iterable[tuple[str, float, str]]) -> dict[str, StageStats]:
    """``(stage, duration_s, trace_id)`` rows -> stats per stage."""
    by_stage: dict[str, list[tuple[float, str]]] = {}
    for stage, duration, trace_id in rows:
        by_stage.setdefault(stage, []).append((duration, trace_id))
    out = {}
    import numpy as np  # loaded when traces are summarised, not by ``import inferwatch.tracing``

    for stage, items in sorted(by_stage.items()):
        durations = np.fromiter((d for d, _ in items), float, len(items))
        p50, p99 = np.percentile(durations, [50, 99])
        slowest = tuple(dict.fromkeys(t for _, t in sorted(items, reverse=True)))[:EXAMPLES]
        out[stage] = StageStats(len(items), float(p50), float(p99), slowest)
    return out


def slowed_stages(before: Mapping[str, StageStats], after: Mapping[str, StageStats]) -> list[StageShift]:
    """Stages of the recent window, the one whose P99 grew most first."""
    shifts = [StageShift(stage, before.get(stage), stats) for stage, stats in after.items()]
    return sorted(shifts, key=lambda s: s.p99_increase_s, reverse=True)
