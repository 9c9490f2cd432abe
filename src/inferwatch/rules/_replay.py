"""Replaying a promtool unit-test file through the native evaluator on simulated time.

As ``promtool test rules`` does: per test group, the input series are loaded,
rules are evaluated at ``0, evaluation_interval, ...`` up to the last
``eval_time``, and an alert test at ``eval_time`` is checked against the
evaluation at the latest ``ts <= eval_time``, comparing the *firing* alerts of
that alertname (labels, plus ``alertname``) with the expected ones. One
difference: an expected alert without ``exp_annotations`` does not compare
annotations (promtool then expects none).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.rules._alert import AlertSink, AlertState
from inferwatch.rules._evaluator import Evaluator
from inferwatch.rules._lifecycle import AlertInstance
from inferwatch.rules._recording import RecordingRule
from inferwatch.rules._rule import Rule
from inferwatch.rules._testfile import AlertTest, TestFile, TestGroup
from inferwatch.store import MemoryStore

__all__ = ["ReplayResult", "run_replay"]


@dataclass
class ReplayResult:
    """Failures (empty when every expectation holds), the timeline, and callers' extra keys."""

    failures: list[str] = field(default_factory=list)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether every expectation held."""
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        """``{"timeline": [...], "failures": [...], **extra}``."""
        return {"timeline": self.timeline, "failures": self.failures, **self.extra}


def _num(v: float) -> float | None:
    return v if math.isfinite(v) else None


def _transitions(before: Mapping[str, Mapping[str, AlertInstance]],
                 after: Mapping[str, Mapping[str, AlertInstance]], ts: float) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for rule, inst in after.items():
        old = before.get(rule, {})
        for fp, a in inst.items():
            prev = old.get(fp)
            if prev is None or prev.shown_state is not a.shown_state or prev.active_at != a.active_at:
                out.append(_entry(ts, rule, a, a.shown_state))
        for fp, a in old.items():
            if fp not in inst and a.state is AlertState.PENDING:
                out.append(_entry(ts, rule, a, AlertState.INACTIVE))
    return sorted(out, key=lambda e: (e["alertname"], sorted(e["labels"].items())))


def _entry(ts: float, rule: str, a: AlertInstance, state: AlertState) -> dict[str, Any]:
    return {"t": ts, "alertname": rule, "labels": a.labels.to_dict(), "state": state.value,
            "value": _num(a.value)}


def _fmt(labels: Mapping[str, str], notes: Mapping[str, str] | None) -> str:
    text = str(Labels(labels))
    return text + (f" annotations {dict(sorted(notes.items()))}" if notes is not None else "")


def _check(test: AlertTest, firing: list[AlertInstance], where: str) -> str | None:
    got = sorted(firing, key=lambda a: a.labels)
    want = sorted(test.expected, key=lambda e: Labels({**e.labels, "alertname": test.alertname}))
    ok = len(got) == len(want)
    for g, w in zip(got, want, strict=False):
        same_notes = w.annotations is None or dict(g.annotations) == dict(w.annotations)
        if g.labels != Labels({**w.labels, "alertname": test.alertname}) or not same_notes:
            ok = False
    if ok:
        return None
    exp = "\n".join(f"      {_fmt({**w.labels, 'alertname': test.alertname}, w.annotations)}" for w in want)
    act = "\n".join(f"      {_fmt(g.labels, g.annotations)}" for g in got)
    return (f"{where}: alertname: {test.alertname}, time: {_dur(test.eval_time)}\n"
            f"    exp:\n{exp or '      (none)'}\n    got:\n{act or '      (none)'}")


def _dur(s: float) -> str:
    from inferwatch.model import format_duration

    return format_duration(s)


def _load(store: MemoryStore, group: TestGroup) -> None:
    samples = [
        Sample(s.labels, i * group.interval, v)
        for s in group.series for i, v in enumerate(s.values) if v is not None
    ]
    store.append(sorted(samples, key=lambda x: x.t))


def run_replay(
    test: TestFile, rules: Sequence[Rule], *, sink: AlertSink | None = None,
    on_evaluated: Callable[[float, SimulatedClock], None] | None = None,
    recordings: Sequence[RecordingRule] = (),
) -> ReplayResult:
    """Run every test group; ``sink`` receives the alerts as the server's pipeline would.

    ``on_evaluated(ts, clock)`` runs after each evaluation (e.g. to tick a
    notification pipeline on the same simulated time); ``recordings`` run
    before the alert rules each round (the SLO rules).
    """
    result = _ResultBuilder(recordings)
    for gi, group in enumerate(test.groups):
        where = f"{test.path}: tests[{gi}]" + (f" ({group.name})" if group.name else "")
        result.run_group(group, rules, test.evaluation_interval, where, sink, on_evaluated)
    result.out.timeline.sort(key=lambda e: e["t"])
    return result.out


class _ResultBuilder:
    """Collects one replay's failures and timeline across groups."""

    def __init__(self, recordings: Sequence[RecordingRule] = ()) -> None:
        self.out = ReplayResult()
        self.recordings = recordings

    def run_group(
        self, group: TestGroup, rules: Sequence[Rule], step: float, where: str,
        sink: AlertSink | None, on_evaluated: Callable[[float, SimulatedClock], None] | None,
    ) -> None:
        """Evaluate one group from 0 to its last ``eval_time`` and check its alert tests."""
        store = MemoryStore()
        _load(store, group)
        clock = SimulatedClock(0.0)
        ev = Evaluator(rules, store, clock=clock, sink=sink, recordings=self.recordings)
        pending = sorted(group.alert_tests, key=lambda t: t.eval_time)
        n_steps = math.floor(group.max_eval_time / step + 1e-9)
        for k in range(n_steps + 1):
            ts = k * step
            clock.set(ts)
            before = ev.instances()
            ev.evaluate(ts)
            after = ev.instances()
            self.out.timeline.extend(_transitions(before, after, ts))
            if on_evaluated is not None:
                on_evaluated(ts, clock)
            while pending and ts <= pending[0].eval_time < ts + step:
                t = pending.pop(0)
                firing = [a for name, inst in after.items() for a in inst.values()
                          if a.state is AlertState.FIRING and a.labels.get("alertname") == t.alertname]
                failure = _check(t, firing, where)
                if failure:
                    self.out.failures.append(failure)
        store.close()
