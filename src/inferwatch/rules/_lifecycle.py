"""One rule's alert instances and their lifecycle, as rules/alerting.go (Prometheus 2.42) runs it.

Per evaluation at ``ts``, for the result vector:

* a new label set becomes *pending* with ``active_at = ts``; a known,
  non-inactive one only updates its value and annotations;
* a pending instance fires once ``ts - active_at >= for``, unless its band
  provider holds it (a recurring excursion, inferwatch's addition): then it
  stays pending;
* an instance missing from the result: a firing one with ``keep_firing_for``
  keeps firing until ``ts - keep_firing_since >= keep_firing_for``; otherwise
  it becomes inactive with ``resolved_at = ts``; a pending one is dropped; a
  resolved one is kept ``RESOLVED_RETENTION`` (15m) so it is re-sent as resolved;
* sending (``needsSending``): never pending; at once after a resolution;
  otherwise when ``last_sent_at + resend_delay < ts``.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field, replace

from inferwatch.model import Labels
from inferwatch.rules._alert import Alert, AlertState

__all__ = ["RESOLVED_RETENTION", "AlertInstance", "step_alerts"]

RESOLVED_RETENTION = 15 * 60.0


@dataclass(frozen=True)
class AlertInstance:
    """The state of one alert (one label set of one rule); times are Unix seconds, 0 = unset.

    (``last_sent_at`` starts at ``-inf`` so an alert firing at time 0 is still sent.)
    """

    labels: Labels
    annotations: Mapping[str, str] = field(default_factory=dict)
    state: AlertState = AlertState.PENDING
    value: float = float("nan")
    active_at: float = 0.0
    fired_at: float = 0.0
    resolved_at: float = 0.0
    keep_firing_since: float = 0.0
    last_sent_at: float = float("-inf")
    held: bool = False  # pending past `for` because its band provider holds it

    @property
    def fingerprint(self) -> str:
        """The identity of the instance (its labels' fingerprint)."""
        return self.labels.fingerprint()

    @property
    def shown_state(self) -> AlertState:
        """``resolved`` for an inactive instance still retained, else the state."""
        return AlertState.RESOLVED if self.state is AlertState.INACTIVE else self.state

    def needs_sending(self, ts: float, resend_delay: float) -> bool:
        """Prometheus's ``needsSending``."""
        if self.state is AlertState.PENDING:
            return False
        if self.resolved_at and self.resolved_at > self.last_sent_at:
            return True
        return self.last_sent_at + resend_delay < ts

    def to_alert(self) -> Alert:
        """The pipeline's view: starts at ``fired_at``, ends at ``resolved_at`` once resolved."""
        return Alert(
            labels=self.labels, annotations=dict(self.annotations), starts_at=self.fired_at,
            ends_at=self.resolved_at if self.state is AlertState.INACTIVE else None, value=self.value,
        )


def step_alerts(
    active: Mapping[str, AlertInstance], results: list[tuple[Labels, Mapping[str, str], float]],
    ts: float, hold: float, keep_firing_for: float, held: Set[str] = frozenset(),
) -> dict[str, AlertInstance]:
    """The instances after one evaluation at ``ts`` (a new dict; inputs are not changed).

    ``held``: fingerprints in the result that must not fire yet (they stay pending).
    """
    out = dict(active)
    seen: set[str] = set()
    for labels, notes, value in results:
        fp = labels.fingerprint()
        seen.add(fp)
        cur = out.get(fp)
        if cur is not None and cur.state is not AlertState.INACTIVE:
            out[fp] = replace(cur, value=value, annotations=notes)
        else:
            out[fp] = AlertInstance(labels, notes, AlertState.PENDING, value, active_at=ts)
    for fp, a in list(out.items()):
        if fp not in seen:
            keep = False
            if a.state is AlertState.FIRING and keep_firing_for > 0:
                since = a.keep_firing_since or ts
                a = replace(a, keep_firing_since=since)
                keep = ts - since < keep_firing_for
            if a.state is AlertState.PENDING or (a.resolved_at and ts - a.resolved_at > RESOLVED_RETENTION):
                del out[fp]
            elif a.state is not AlertState.INACTIVE and not keep:
                out[fp] = replace(a, state=AlertState.INACTIVE, resolved_at=ts)
            else:
                out[fp] = a
            if not keep:
                continue
        elif a.keep_firing_since:
            a = replace(a, keep_firing_since=0.0)
        if a.state is AlertState.PENDING and ts - a.active_at >= hold:
            if fp in held:
                a = a if a.held else replace(a, held=True)
            else:
                a = replace(a, state=AlertState.FIRING, fired_at=ts, held=False)
        out[fp] = a
    return out
