"""Actions run once per firing episode of an alert; each outcome is recorded in SQLite.

An episode is an alert's fingerprint plus its ``starts_at``: flushes, repeats,
``continue`` routes and restarts never run an action twice for one episode.
When the episode resolves, actions that can restore (degrade) do so once.

An action with ``once_per`` labels and a ``cooldown`` also runs once per target:
when another alert with the same values of those labels already ran it within
the cooldown (five drifted features of one model, a P0 storm across instances
of one service), the episode is recorded as deduplicated and nothing runs.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from inferwatch._exceptions import ActionError, InferwatchError
from inferwatch.alerting._delivery import Executor, InlineExecutor
from inferwatch.alerting._notification import Notification, Stage, fingerprint
from inferwatch.alerting.actions._ledger import DEDUPLICATED, ActionLedger, ActionRecord, EpisodeKey
from inferwatch.model import Matcher, format_duration, matches_all
from inferwatch.rules import Alert

__all__ = ["Action", "ActionRecord", "ActionRun", "ActionStage", "RecordingAction", "fill_placeholders"]

log = logging.getLogger("inferwatch.alerting")
DEFAULT_TIMEOUT_S = 10.0  # an action without a configured timeout (a stand-in) is abandoned after this


class Action(Protocol):
    """Something done about an alert; raises ``ActionError`` on failure."""

    name: str
    matchers: tuple[Matcher, ...]

    def fire(self, alert: Alert) -> str:
        """Act on a firing alert; return the outcome line."""
        ...

    def resolve(self, alert: Alert) -> str | None:
        """Undo on resolve (``None``: nothing to undo)."""
        ...


def fill_placeholders(template: str, labels: Mapping[str, str]) -> str:
    """Replace ``{label}`` with the alert's label value (``ActionError`` names a missing one)."""
    import re

    from inferwatch.settings import redact_url

    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in labels:
            shown = redact_url(template) if "://" in template else template  # may hold user:pass@
            raise ActionError(f"placeholder {{{m.group(1)}}} in {shown!r}: the alert has no such label")
        return labels[m.group(1)]

    return re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", sub, template)


@dataclass(eq=False)
class ActionRun:
    """One run of an action for one phase of an alert's episode, on the executor."""

    action: Action
    alert: Alert
    phase: str
    key: EpisodeKey
    started: float
    deadline: float
    on_done: Callable[[], None]
    done: threading.Event = field(default_factory=threading.Event)
    outcome: str | None = None
    ok: bool = False
    judged: bool = False
    note: str | None = None

    @property
    def thread_name(self) -> str:
        """The name of the thread a ``ThreadExecutor`` runs it on."""
        return f"action-{self.action.name}"

    def run(self) -> None:
        """Fire or resolve; keep the outcome (a failure is an outcome, never raised); signal completion."""
        try:
            self.outcome = self.action.resolve(self.alert) if self.phase == "resolve" else self.action.fire(
                self.alert)
            self.ok = True
        except InferwatchError as exc:
            self.outcome, self.ok = f"failed: {exc}", False
        except Exception as exc:  # an action bug must not stop notifications
            log.exception("action %s failed", self.action.name)
            self.outcome, self.ok = f"failed: {exc.__class__.__name__}", False
        finally:
            self.done.set()
            self.on_done()


@dataclass(eq=False)
class _Held:
    n: Notification
    runs: list[ActionRun]
    notes: list[str]


class ActionStage:
    """Runs the matching actions for the alerts of a notification on the executor; adds outcome notes.

    Like a receiver's delivery: the ledger row is claimed before the run (the action's outbox
    entry: at most once, a crash mid-run never runs it again), the run goes to the executor
    (inline for replay and tests, a thread of its own in the server) with a deadline (the
    action's ``timeout``). A notification whose actions are still running is held here and
    released from ``tick`` with their outcomes (or ``timed out``) as notes, so a hung action
    delays only its own notification, never the tick or the evaluator.
    """

    def __init__(self, actions: Sequence[Action], ledger: ActionLedger,
                 on_record: Callable[[ActionRecord], None] | None = None,
                 once_per: Mapping[str, tuple[tuple[str, ...], float]] | None = None, *,
                 executor: Executor | None = None, timeouts: Mapping[str, float] | None = None,
                 wake: Callable[[], None] = lambda: None) -> None:
        """``once_per`` maps an action name to its target labels and cooldown (seconds);
        ``timeouts`` an action name to its deadline (seconds); ``wake`` is called when a run ends."""
        self.actions = tuple(actions)
        self._ledger = ledger
        self._on_record = on_record
        self._once_per = {k: v for k, v in (once_per or {}).items() if v[0] and v[1] > 0}
        self._executor = executor or InlineExecutor()
        self._timeouts = dict(timeouts or {})
        self._wake = wake
        self._running: list[ActionRun] = []
        self._held: list[_Held] = []

    def process(self, n: Notification, now: float) -> Notification | None:
        """Start what is owed for every alert; pass the notification on with the outcomes (or hold it)."""
        notes: list[str] = []
        runs: list[ActionRun] = []
        for g in n.groups:
            for alert in g.alerts:
                for action in self.actions:
                    if matches_all(action.matchers, alert.labels):
                        got = self._run(action, alert, alert.resolved(now), now)
                        if isinstance(got, ActionRun):
                            runs.append(got)
                        elif got:
                            notes.append(got)
        if runs:
            self._held.append(_Held(n, runs, notes))
            return None
        return n.with_notes(*notes) if notes else n

    def tick(self, now: float) -> list[Notification]:
        """Judge finished and overdue runs; release every held notification whose runs are judged."""
        return self.release(None, now)

    def gate(self, receiver: str) -> Stage:
        """This stage in ``receiver``'s chain (one stage is shared by every chain: each releases its own)."""
        return _Gate(self, receiver)

    def release(self, receiver: str | None, now: float) -> list[Notification]:
        """Judge runs; the held notifications of ``receiver`` (``None``: all) whose runs are judged."""
        self.collect(now)
        out: list[Notification] = []
        for h in list(self._held):
            if (receiver is None or h.n.receiver == receiver) and all(r.judged for r in h.runs):
                self._held.remove(h)
                notes = h.notes + [r.note for r in h.runs if r.note]
                out.append(h.n.with_notes(*notes) if notes else h.n)
        return out

    def collect(self, now: float) -> None:
        """Record finished runs and time out overdue ones (their late outcome is ignored)."""
        for run in list(self._running):
            if run.done.is_set():
                self._judge(run, run.outcome, run.ok, now)
            elif now >= run.deadline:
                log.error("action %s[%s] %s: timed out", run.action.name, run.alert.name, run.phase)
                self._judge(run, f"failed: timed out after {run.deadline - run.started:g}s", False, now)
            else:
                continue
            self._running.remove(run)

    def next_wakeup(self) -> float | None:
        """The earliest deadline of a run in flight."""
        return min((r.deadline for r in self._running), default=None)

    def in_flight(self) -> int:
        """Runs not judged yet."""
        return len(self._running)

    def _run(self, action: Action, alert: Alert, resolved: bool, now: float) -> str | ActionRun | None:
        key = (action.name, fingerprint(alert), alert.starts_at)
        phase = "resolve" if resolved else "fire"
        running = next((r for r in self._running if r.key == key), None)
        if running is not None:  # a later flush waits behind it: the page never overtakes its outcome
            return running
        if self._has(*key, phase):
            return None
        if resolved and not self._has(*key, "fire", ok_only=True):
            return None  # never ran (or failed, or was deduplicated, or still runs): nothing to undo
        earlier = None if resolved else self._covered(action.name, alert, now)
        if not self._claim(action, alert, phase, now):
            return None
        if earlier is not None:  # recorded, not run, and no note: the first run said it
            self._finish(action, alert, key, phase, now, earlier, True)
            return None
        timeout = self._timeouts.get(action.name, DEFAULT_TIMEOUT_S)
        run = ActionRun(action, alert, phase, key, now, now + timeout, self._wake)
        self._executor.start(run)
        if run.done.is_set():  # inline: judged now, so records and notes keep the tick's order
            self._judge(run, run.outcome, run.ok, now)
            return run.note
        self._running.append(run)
        return run

    def _judge(self, run: ActionRun, outcome: str | None, ok: bool, now: float) -> None:
        run.judged = True
        if outcome is None:  # nothing to undo: leave no record
            self._ledger.forget(run.key, run.phase)
            return
        self._finish(run.action, run.alert, run.key, run.phase, now, outcome, ok)
        run.note = f"action {run.action.name} ({run.phase}): {outcome}"

    def _finish(self, action: Action, alert: Alert, key: EpisodeKey, phase: str,
                now: float, outcome: str, ok: bool) -> None:
        self._ledger.finish(key, phase, outcome, ok)
        log.info("action %s[%s] %s: %s", action.name, alert.name, phase, outcome)
        if self._on_record is not None:
            self._on_record(ActionRecord(now, action.name, alert.name, alert.labels.to_dict(), phase,
                                         outcome, ok))

    def _covered(self, name: str, alert: Alert, now: float) -> str | None:
        """The dedup outcome when a run for the same target is within the cooldown, else None."""
        if name not in self._once_per:
            return None
        labels, cooldown = self._once_per[name]
        target = {k: alert.labels.get(k) or "" for k in labels}
        for row in self._ledger.fired_since(name, now - cooldown, DEDUPLICATED):
            if all((row.labels.get(k) or "") == v for k, v in target.items()):
                what = ", ".join(f"{k}={v!r}" for k, v in target.items())
                at = datetime.fromtimestamp(row.t, UTC).strftime("%Y-%m-%d %H:%M:%SZ")
                return (f"{DEDUPLICATED} already ran for {what} at {at} ({row.alertname}); "
                        f"once per {format_duration(cooldown)}")
        return None

    def _has(self, action: str, fp: str, episode: float, phase: str, ok_only: bool = False) -> bool:
        got = self._ledger.get((action, fp, episode), phase)
        if got is None:
            return False
        ok, outcome = got
        return not ok_only or (ok and not outcome.startswith(DEDUPLICATED))

    def _claim(self, action: Action, alert: Alert, phase: str, now: float) -> bool:
        # Written before running: a crash mid-action never runs it a second time.
        return self._ledger.claim((action.name, fingerprint(alert), alert.starts_at), phase, alert.name,
                                  alert.labels.to_dict(), now)

    def records(self, limit: int = 1000) -> list[ActionRecord]:
        """Recorded runs, oldest first."""
        return self._ledger.rows(limit)


class _Gate:
    """An ``ActionStage`` in one receiver's chain: processes through it, releases only its own."""

    def __init__(self, stage: ActionStage, receiver: str) -> None:
        self._stage, self._receiver = stage, receiver

    def process(self, n: Notification, now: float) -> Notification | None:
        """The shared stage's ``process``."""
        return self._stage.process(n, now)

    def tick(self, now: float) -> list[Notification]:
        """What the shared stage holds for this receiver and may release now."""
        return self._stage.release(self._receiver, now)


class RecordingAction:
    """Stands in for an action (replay, tests): records that it would run, changes nothing."""

    def __init__(self, name: str, matchers: tuple[Matcher, ...], restores: bool = False) -> None:
        self.name, self.matchers, self.restores = name, matchers, restores
        self.fired: list[Alert] = []
        self.resolved: list[Alert] = []

    def fire(self, alert: Alert) -> str:
        """Record the firing alert."""
        self.fired.append(alert)
        return "recorded"

    def resolve(self, alert: Alert) -> str | None:
        """Record the resolution when the real action would restore."""
        if not self.restores:
            return None
        self.resolved.append(alert)
        return "recorded"
