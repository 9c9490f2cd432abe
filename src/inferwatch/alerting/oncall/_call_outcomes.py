"""What a confirmed call's outcome does: an answer acknowledges its group, no answer escalates at once.

An answered call is an ``answered`` event (who, the platform's record) and then
the group's acknowledgement by whoever answered, through the same path as
``inferwatch ack``: the escalation stops, MTTA counts it, and every channel
that carried the page is told who answered. A call unanswered
through all its rounds is an ``unanswered`` event and the group's next
escalation step goes out now instead of after its ``after``.
"""

from __future__ import annotations

from collections.abc import Callable

from inferwatch.alerting._notification import AlertGroup
from inferwatch.alerting.oncall._calls import Call, CallOutcome
from inferwatch.alerting.oncall._escalation import Escalator
from inferwatch.alerting.oncall._oncall import OnCall

__all__ = ["CallOutcomes"]


class CallOutcomes:
    """``Outcomes`` over the pipeline's on-call side and escalation."""

    def __init__(self, oncall: OnCall, escalator: Escalator,
                 live: Callable[[str, float], AlertGroup | None]) -> None:
        self._oncall, self._escalator, self._live = oncall, escalator, live

    def wanted(self, key: str, now: float) -> bool:
        """The group still fires and nobody acknowledged it."""
        g = self._live(key, now)
        return g is not None and bool(g.firing()) and self._oncall.acks.get(key, now) is None

    def answered(self, call: Call, out: CallOutcome, now: float) -> None:
        """Acknowledge the call's groups for the number that answered, and tell who was paged."""
        who = f"{call.number} ({call.receiver})"
        for key in call.groups:
            for ack in self._oncall.answered(now, key, who, _detail(call, out)):
                self._escalator.acknowledged(ack.group_key, ack.note(), now)

    def unanswered(self, call: Call, out: CallOutcome, now: float) -> None:
        """Record it, and send each group's next escalation step now."""
        why = f"{call.number} did not answer {call.rounds} call{'s' if call.rounds > 1 else ''}"
        for key in call.groups:
            if self._oncall.unanswered(now, key, _detail(call, out)):
                self._escalator.hurry(key, now, why)


def _detail(call: Call, out: CallOutcome) -> dict[str, object]:
    return {"receiver": call.receiver, "number": call.number, "call_id": call.call_id, "round": call.round,
            "rounds": call.rounds, **({"record": dict(out.detail)} if out.detail else {})}
