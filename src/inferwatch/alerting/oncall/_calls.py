"""Confirmed phone calls: whether each call was answered, and the next round while it was not.

A voice receiver with ``confirm`` hands every call it placed to ``CallWatch``.
``round_interval`` after a call the watch asks the platform how it went (its status
query): answered, and ``on_answered`` acknowledges the call's groups for whoever
answered; not answered, and the same number is called again until the receiver's
``rounds`` are spent, then ``on_unanswered`` sends the group's next escalation step
at once, after texting the number when the receiver has an ``sms_fallback``. A call
the platform refused counts as not answered without asking. A call whose record is
not ready yet is asked about again one interval later (``MAX_CHECKS`` times at most,
then it counts as not answered). Calls for groups no longer wanted (resolved,
acknowledged) are dropped unasked. The watch runs on the pipeline's tick and keeps
its calls in memory: a restart forgets the calls in flight, and their groups
escalate on their usual delays.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

__all__ = ["MAX_CHECKS", "Call", "CallOutcome", "CallWatch", "Outcomes", "Phone"]

log = logging.getLogger("inferwatch.alerting")
MAX_CHECKS = 5  # asked this often without a record: the call counts as not answered


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """What the platform says of one call."""

    status: Literal["answered", "unanswered", "pending"]
    detail: Mapping[str, str] = field(default_factory=dict)  # the platform's own words (state, times)


class Phone(Protocol):
    """A voice receiver that can say how a call went and call again."""

    def outcome(self, call: Call) -> CallOutcome:
        """Ask the platform about ``call``."""
        ...

    def redial(self, call: Call) -> str:
        """Place the same call again; the new call's id."""
        ...


@dataclass(frozen=True, slots=True)
class Call:
    """One placed call of a confirming voice receiver."""

    receiver: str
    number: str
    call_id: str
    groups: tuple[str, ...]  # the group keys the call is about
    placed: float
    phone: Phone = field(compare=False, repr=False)
    params: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)  # to call again
    round: int = 1
    rounds: int = 1
    interval: float = 60.0
    checks: int = 0
    error: str = ""  # the call itself failed (the platform refused it): not answered, nothing to ask
    texted: bool = False  # the number was texted already (its call failed)
    fallback: Callable[[], None] | None = field(default=None, compare=False, repr=False)  # text it


class Outcomes(Protocol):
    """What the calls' outcomes do (the pipeline's on-call side)."""

    def wanted(self, key: str, now: float) -> bool:
        """Whether group ``key`` still wants calls (it fires, nobody acknowledged it)."""
        ...

    def answered(self, call: Call, out: CallOutcome, now: float) -> None:
        """``call`` was answered."""
        ...

    def unanswered(self, call: Call, out: CallOutcome, now: float) -> None:
        """Every round of ``call`` went unanswered."""
        ...


class CallWatch:
    """The calls waiting for their outcome; ``tick`` asks about the due ones."""

    def __init__(self, outcomes: Outcomes | None = None, wake: Callable[[], None] = lambda: None,
                 now: Callable[[], float] = lambda: float("-inf")) -> None:
        """``wake``: the runner ticks soon (a callback came); ``now``: the pipeline's clock."""
        self._outcomes, self._wake, self._now = outcomes, wake, now
        self._lock = threading.Lock()
        self._calls: list[tuple[float, Call]] = []  # (when to ask, call)
        self._reports: dict[str, CallOutcome] = {}  # pushed by a platform's callback, by call id

    def report(self, call_id: str, number: str, outcome: CallOutcome) -> bool:
        """A platform's callback says how call ``call_id`` to ``number`` went: settled on the next tick.

        Returns whether such a call is waiting (an unknown id, or another number, changes nothing).
        """
        with self._lock:
            found = [(t, c) for t, c in self._calls if c.call_id == call_id and c.number == number]
            if not found:
                return False
            self._reports[call_id] = outcome
            now = self._now()
            self._calls = [(min(t, now) if c.call_id == call_id else t, c) for t, c in self._calls]
        self._wake()
        return True

    def reported(self, call_id: str) -> CallOutcome | None:
        """The outcome a callback reported for ``call_id`` (once), if any."""
        with self._lock:
            return self._reports.pop(call_id, None)

    def bind(self, outcomes: Outcomes) -> None:
        """Send the outcomes to ``outcomes`` from now on (the pipeline's parts after a reload)."""
        self._outcomes = outcomes

    def placed(self, call: Call) -> None:
        """A receiver placed ``call`` (from any thread)."""
        with self._lock:
            self._calls.append((call.placed + call.interval, call))

    def pending(self) -> list[Call]:
        """The calls not yet settled."""
        with self._lock:
            return [c for _, c in self._calls]

    def next_wakeup(self) -> float | None:
        """When the next call is due to be asked about."""
        with self._lock:
            return min((t for t, _ in self._calls), default=None)

    def tick(self, now: float) -> None:
        """Ask about every due call; answer, call again or give up."""
        with self._lock:
            due = [c for t, c in self._calls if t <= now]
            self._calls = [(t, c) for t, c in self._calls if t > now]
        outcomes = self._outcomes
        for call in due:
            if outcomes is not None and any(outcomes.wanted(k, now) for k in call.groups):
                self._settle(call, outcomes, now)

    def _settle(self, call: Call, outcomes: Outcomes, now: float) -> None:
        try:
            out = CallOutcome("unanswered", {"error": call.error}) if call.error else call.phone.outcome(call)
        except Exception as exc:
            log.warning("%s: asking about call %s failed: %s", call.receiver, call.call_id, exc)
            out = CallOutcome("pending")
        if out.status == "answered":
            outcomes.answered(call, out, now)
            return
        if out.status == "pending" and call.checks + 1 < MAX_CHECKS:
            with self._lock:  # asked again one interval on; the call (and its day) stay as placed
                self._calls.append((now + call.interval, replace(call, checks=call.checks + 1)))
            return
        if call.round < call.rounds:
            try:
                new_id = call.phone.redial(call)
            except Exception as exc:
                log.warning("%s: calling %s again failed: %s", call.receiver, call.number, exc)
            else:
                self.placed(replace(call, call_id=new_id, placed=now, round=call.round + 1, checks=0,
                                    error=""))
                return
        if call.fallback is not None and not call.texted:
            out = replace(out, detail={**out.detail, "sms": _text(call)})
        outcomes.unanswered(call, out, now)


def _text(call: Call) -> str:
    """Text the number nobody answered at: ``sent``, or why not."""
    assert call.fallback is not None
    try:
        call.fallback()
    except Exception as exc:
        log.warning("%s: texting %s after its unanswered calls failed: %s", call.receiver, call.number, exc)
        return f"failed: {exc}"[:200]
    return "sent"
