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
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Protocol

from inferwatch._exceptions import ActionError, InferwatchError
from inferwatch.alerting._ledger import DEDUPLICATED, ActionLedger, ActionRecord
from inferwatch.alerting._notification import Notification, fingerprint
from inferwatch.model import Matcher, format_duration, matches_all
from inferwatch.rules import Alert

__all__ = ["Action", "ActionRecord", "ActionStage", "RecordingAction", "fill_placeholders"]

log = logging.getLogger("inferwatch.alerting")


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

    from inferwatch.config._redact import redact_url

    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in labels:
            shown = redact_url(template) if "://" in template else template  # may hold user:pass@
            raise ActionError(f"placeholder {{{m.group(1)}}} in {shown!r}: the alert has no such label")
        return labels[m.group(1)]

    return re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", sub, template)


class ActionStage:
    """A notify stage: runs the matching actions for the alerts of a notification, adds outcome notes."""

    def __init__(self, actions: Sequence[Action], ledger: ActionLedger,
                 on_record: Callable[[ActionRecord], None] | None = None,
                 once_per: Mapping[str, tuple[tuple[str, ...], float]] | None = None) -> None:
        """``once_per`` maps an action name to its target labels and cooldown (seconds)."""
        self.actions = tuple(actions)
        self._ledger = ledger
        self._on_record = on_record
        self._once_per = {k: v for k, v in (once_per or {}).items() if v[0] and v[1] > 0}

    def process(self, n: Notification, now: float) -> Notification | None:
        """Run what is owed for every alert; pass the notification on with the outcomes."""
        notes: list[str] = []
        for g in n.groups:
            for alert in g.alerts:
                for action in self.actions:
                    if matches_all(action.matchers, alert.labels):
                        note = self._run(action, alert, alert.resolved(now), now)
                        if note:
                            notes.append(note)
        return n.with_notes(*notes) if notes else n

    def tick(self, now: float) -> list[Notification]:
        """Nothing held back."""
        return []

    def _run(self, action: Action, alert: Alert, resolved: bool, now: float) -> str | None:
        key = (action.name, fingerprint(alert), alert.starts_at)
        phase = "resolve" if resolved else "fire"
        if self._has(*key, phase):
            return None
        if resolved and not self._has(*key, "fire", ok_only=True):
            return None  # never ran (or failed, or was deduplicated): nothing to undo
        earlier = None if resolved else self._covered(action.name, alert, now)
        if not self._claim(action, alert, phase, now):
            return None
        if earlier is not None:  # recorded, not run, and no note: the first run said it
            self._finish(action, alert, key, phase, now, earlier, True)
            return None
        try:
            outcome = action.resolve(alert) if resolved else action.fire(alert)
            ok = True
        except InferwatchError as exc:
            outcome, ok = f"failed: {exc}", False
        except Exception as exc:  # an action bug must not stop notifications
            log.exception("action %s failed", action.name)
            outcome, ok = f"failed: {exc.__class__.__name__}", False
        if outcome is None:  # nothing to undo: leave no record
            self._ledger.forget(key, phase)
            return None
        self._finish(action, alert, key, phase, now, outcome, ok)
        return f"action {action.name} ({phase}): {outcome}"

    def _finish(self, action: Action, alert: Alert, key: tuple[str, str, float], phase: str,
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
