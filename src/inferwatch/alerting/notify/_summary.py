"""A group's summary line and the alerts a message lists: shared by every renderer.

A FIRING message lists only what fires (an alert that resolved since the last
message is not news in it; the RESOLVED message says so), and a group of several
alerts is summarised by counting and naming what it holds, on the label that
tells them apart: ``3 features: age, income, clicks``.
"""

from __future__ import annotations

from inferwatch.alerting._notification import AlertGroup
from inferwatch.rules import Alert

__all__ = ["SUMMARY_CHARS", "SUMMARY_NAMES", "group_summary", "shown_alerts"]

SUMMARY_NAMES, SUMMARY_CHARS = 10, 300
"""A group summary names at most this many values, in at most this many characters (a storm stays short)."""


def group_summary(g: AlertGroup) -> str:
    """One alert's summary; for several, what they hold: ``3 features: age, income, clicks``."""
    shown = shown_alerts(g)
    if not shown:
        return ""
    if len(shown) == 1:
        return shown[0].annotations.get("summary", "")
    first = shown[0].labels
    common = {k for k, v in first.items() if all(a.labels.get(k) == v for a in shown)}
    differing: dict[str, dict[str, None]] = {}  # label -> its values in order (a dict: O(1) membership)
    for a in shown:
        for k, v in a.labels.items():
            if k not in common:
                differing.setdefault(k, {})[v] = None
    if not differing:
        return next((a.annotations.get("summary", "") for a in shown if a.annotations.get("summary")), "")
    name, seen = max(differing.items(), key=lambda kv: len(kv[1]))  # the label that tells them apart
    values = list(seen)
    named = ", ".join(values[:SUMMARY_NAMES])[:SUMMARY_CHARS]
    more = f" and {len(values) - SUMMARY_NAMES} more" if len(values) > SUMMARY_NAMES else ""
    return f"{len(shown)} {name}{'' if name.endswith('s') else 's'}: {named}{more}"


def shown_alerts(g: AlertGroup) -> tuple[Alert, ...]:
    """The alerts a message lists: a firing group's firing ones (no stale resolved lines)."""
    return g.firing() if g.status == "firing" else g.alerts
