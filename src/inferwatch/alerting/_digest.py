"""The P2 digest: alerts gathered and delivered once a day at a local time, by dimension.

Each entry keeps the alert's first-seen time, last value and whether it is
still active. Entries live in SQLite, so a restart loses none; after a
delivery, resolved entries are dropped and active ones carry over.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from inferwatch.alerting._notification import AlertGroup, Notification, fingerprint
from inferwatch.alerting._state import StateStore
from inferwatch.model import Labels, readable
from inferwatch.rules import Alert

__all__ = ["DigestStage", "next_delivery"]

# The digest's fixed words: heading, first seen, last value, still active, resolved, no value.
_WORDS = {
    "en": ("inferwatch digest {local} {tz}: {n} alerts", "first seen", "last value", "still active",
           "resolved", "n/a", "{alertname} {shown}: {first_seen} {first}, {last_value} {value}, {state}", {}),
    "zh-CN": ("inferwatch 每日汇总 {local} {tz}：共 {n} 条告警", "首次出现", "最近值", "仍在告警", "已恢复",
              "无", "{alertname} {shown}：{first_seen} {first}，{last_value} {value}，{state}",
              {"infrastructure": "基础设施", "service": "服务", "quality": "模型质量", "business": "业务",
               "other": "其他"}),
}


def next_delivery(after: float, at: str, tz: ZoneInfo) -> float:
    """The first ``at`` (HH:MM local in ``tz``) strictly after ``after``.

    >>> t = next_delivery(0.0, "09:00", ZoneInfo("Asia/Shanghai"))  # 1970-01-01 08:00 local
    >>> datetime.fromtimestamp(t, ZoneInfo("Asia/Shanghai")).isoformat()
    '1970-01-01T09:00:00+08:00'
    """
    hh, mm = (int(x) for x in at.split(":"))
    day: date = datetime.fromtimestamp(after, tz).date()
    for _ in range(3):
        candidate = datetime.combine(day, time(hh, mm), tzinfo=tz).timestamp()
        if candidate > after:
            return candidate
        day += timedelta(days=1)
    raise AssertionError("unreachable: a day later is always after")


@dataclass(slots=True)
class _Entry:
    labels: Labels
    annotations: dict[str, str]
    first_seen: float
    last_seen: float
    value: float
    active: bool


class DigestStage:
    """The last stage of a digest receiver: collects, and on ``tick`` hands over the digest."""

    def __init__(self, name: str, at: str, timezone: str, db: StateStore,
                 deliver: Callable[[Notification, float], None], start: float,
                 language: str = "en") -> None:
        self.name, self.at, self.tz = name, at, ZoneInfo(timezone)
        self._words = _WORDS.get(language, _WORDS["en"])
        self._tzname = timezone
        self._db = db
        self._deliver = deliver
        self._entries: dict[str, _Entry] = {}
        self.reload(start)

    def reload(self, start: float) -> None:
        """Read the collected alerts and the last delivery again (also when an HA replica takes over)."""
        self._entries = {}
        for fp, body, first, last in self._db.query(
                "SELECT fingerprint, body, first_seen, last_seen FROM digest WHERE receiver=?",
                (self.name,)):
            b = readable(json.loads(str(body)))
            self._entries[str(fp)] = _Entry(Labels(b["labels"]), b["annotations"], float(str(first)),
                                            float(str(last)), float(b["value"]), bool(b["active"]))
        rows = self._db.query("SELECT value FROM meta WHERE key=?", (f"digest:{self.name}:last",))
        self.last_delivery = float(str(rows[0][0])) if rows else start
        self.due = next_delivery(self.last_delivery, self.at, self.tz)

    def process(self, n: Notification, now: float) -> Notification | None:
        """Remember every alert of the notification; nothing goes further now."""
        with self._db.transaction() as c:
            for a in n.alerts:
                e = self._entries.get(fingerprint(a))
                first = a.starts_at if e is None else min(e.first_seen, a.starts_at)
                value = a.value if not math.isnan(a.value) or e is None else e.value
                e = _Entry(a.labels, dict(a.annotations), first, now, value, not a.resolved(now))
                self._entries[fingerprint(a)] = e
                body = json.dumps({"labels": e.labels.to_dict(), "annotations": e.annotations,
                                   "value": "NaN" if math.isnan(e.value) else e.value,
                                   "active": e.active})
                c.execute("INSERT OR REPLACE INTO digest VALUES (?,?,?,?,?)",
                          (self.name, fingerprint(a), body, e.first_seen, e.last_seen))
        return None

    def tick(self, now: float) -> list[Notification]:
        """At the delivery time, send the digest (if anything was gathered)."""
        if now < self.due:
            return []
        if self._entries:
            self._deliver(self.build(now), now)
            done = [fp for fp, e in self._entries.items() if not e.active]
            with self._db.transaction() as c:
                c.executemany("DELETE FROM digest WHERE receiver=? AND fingerprint=?",
                              [(self.name, fp) for fp in done])
            for fp in done:
                del self._entries[fp]
        self.last_delivery = now
        with self._db.transaction() as c:
            c.execute("INSERT OR REPLACE INTO meta VALUES (?,?)", (f"digest:{self.name}:last", str(now)))
        self.due = next_delivery(now, self.at, self.tz)
        return []

    def build(self, now: float) -> Notification:
        """The digest notification: one group per dimension, lines in the notes."""
        local = datetime.fromtimestamp(now, self.tz).strftime("%Y-%m-%d %H:%M")
        head, first_seen, last_value, active, resolved, none, line, dims = self._words
        lines = [head.format(local=local, tz=self._tzname, n=len(self._entries))]
        groups = []
        by_dim: dict[str, list[_Entry]] = {}
        for e in self._entries.values():
            by_dim.setdefault(e.labels.get("dimension", "other"), []).append(e)
        for dim in sorted(by_dim):
            entries = sorted(by_dim[dim], key=lambda e: (e.first_seen, e.labels))
            lines.append(f"## {dims.get(dim, dim)} ({len(entries)})")
            alerts = []
            for e in entries:
                first = datetime.fromtimestamp(e.first_seen, self.tz).strftime("%Y-%m-%d %H:%M")
                value = none if math.isnan(e.value) else f"{e.value:.4g}"
                state = active if e.active else resolved
                shown = " ".join(f"{k}={v}" for k, v in e.labels.items()
                                 if k not in ("alertname", "tier", "severity", "dimension"))
                lines.append("- " + line.format(alertname=e.labels.get("alertname", ""), shown=shown,
                                                first_seen=first_seen, first=first, last_value=last_value,
                                                value=value, state=state))
                alerts.append(Alert(e.labels, e.annotations, e.first_seen,
                                    None if e.active else e.last_seen, e.value))
            groups.append(AlertGroup(f"digest:{self.name}:{dim}", Labels({"dimension": dim}),
                                     tuple(alerts), now))
        return Notification(self.name, tuple(groups), tuple(lines), kind="digest")

    def pending(self) -> int:
        """Alerts gathered for the next digest."""
        return len(self._entries)


