"""The demo's scripted story as data: phases with a start time and the switches they set.

Times are story seconds (compressed time: at ``--speed 20`` five story minutes
take fifteen real seconds). A phase sets the service's faults and the feature
drift; ``degrade`` is left alone unless a phase names it, because turning the
degraded path on is the alerting pipeline's job (its degrade action calls
``POST /admin/degrade``), not the story's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from inferwatch.demo._service import Faults

__all__ = ["DEFAULT_STORY", "Phase", "Story"]


@dataclass(frozen=True, slots=True)
class Phase:
    """From ``start_s`` (story seconds) on: these faults, this drift, and why."""

    name: str
    start_s: float
    faults: Faults = field(default_factory=Faults)
    drift: float = 0.0
    spread: float = 1.0
    degrade: bool | None = None
    accelerator: bool | None = None
    """From here the model's session asks for an accelerator this machine lacks (True) or for the
    CPU (False); None leaves the session alone (the numpy model ignores it)."""
    note: str = ""


@dataclass(frozen=True)
class Story:
    """Phases in start order, and when the story ends (story seconds)."""

    phases: tuple[Phase, ...]
    end_s: float

    def __post_init__(self) -> None:
        if not self.phases or self.phases[0].start_s != 0:
            raise ValueError("a story starts with a phase at 0 s")
        starts = [p.start_s for p in self.phases]
        if starts != sorted(starts) or len(set(starts)) != len(starts):
            raise ValueError(f"phase starts must increase strictly, got {starts}")
        if self.end_s <= starts[-1]:
            raise ValueError(f"the story must end after its last phase starts ({self.end_s} <= {starts[-1]})")

    @classmethod
    def of(cls, phases: Sequence[Phase], end_s: float) -> Story:
        """Build and check a story."""
        return cls(tuple(phases), float(end_s))

    def phase_at(self, t: float) -> Phase:
        """The phase running at story time ``t`` (the last one after the end)."""
        current = self.phases[0]
        for phase in self.phases:
            if phase.start_s <= t:
                current = phase
        return current


_MIN = 60.0

DEFAULT_STORY = Story.of(
    [
        Phase("normal", 0.0, note="healthy traffic"),
        Phase("latency", 5 * _MIN, Faults(latency_ms=1200.0),
              note="the full model path slows to ~1.2 s: P99 > 1 s (P1, degrade action)"),
        Phase("outage", 12 * _MIN, Faults(unavailable_ratio=0.7),
              note="70% of requests answer 503 (P0, scale-out action + phone)"),
        Phase("drift", 17 * _MIN, drift=1.0,
              note="the audience shifts: feature drift (PSI rises; P2 digest, no page), "
                   "yet the estimated accuracy holds"),
        Phase("narrow", 20 * _MIN, drift=1.0, spread=0.4,
              note="the audience narrows to undecided users: estimated accuracy drops at the next "
                   "window; the labels, 6 story minutes late, confirm it after"),
        Phase("fallback", 24 * _MIN, drift=1.0, spread=0.4, accelerator=True,
              note="the model is redeployed on a session asking for a GPU provider this machine lacks: "
                   "ONNX Runtime runs it on the CPU (ExecutionProviderFallback, P1, pages once)"),
    ],
    end_s=32 * _MIN,
)
"""normal -> latency -> outage (503s) -> drift -> accuracy loss -> provider fallback, 32 story minutes."""
