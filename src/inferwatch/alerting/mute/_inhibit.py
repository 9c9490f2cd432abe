"""Inhibition: a firing source alert mutes target alerts that share its ``equal`` labels.

Alertmanager's semantics: labels absent from both alerts count as equal, and
an alert that matches both sides of a rule never inhibits itself. One extension:
a rule's ``hold`` keeps a source muting for that long after it resolved.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from inferwatch.alerting._notification import fingerprint
from inferwatch.model import Matcher, matches_all, parse_matchers
from inferwatch.rules import Alert
from inferwatch.settings import InhibitRuleSpec

__all__ = ["InhibitRule", "Inhibitor", "Muter"]


class Muter(Protocol):
    """Anything that says whether an alert is muted now (inhibitor, silences)."""

    def mutes(self, labels: Mapping[str, str], now: float) -> bool:
        """Whether an alert with ``labels`` is muted at ``now``."""
        ...


@dataclass(frozen=True, slots=True)
class InhibitRule:
    """A built inhibition rule."""

    source: tuple[Matcher, ...]
    target: tuple[Matcher, ...]
    equal: tuple[str, ...]
    hold: float = 0.0

    @classmethod
    def build(cls, spec: InhibitRuleSpec) -> InhibitRule:
        """From the config spec."""
        return cls(
            tuple(m for t in spec.source_matchers for m in parse_matchers(t)),
            tuple(m for t in spec.target_matchers for m in parse_matchers(t)),
            spec.equal,
            spec.hold,
        )

    def inhibits(self, source: Alert, target: Mapping[str, str]) -> bool:
        """Whether firing ``source`` mutes an alert with labels ``target`` (``hold`` aside)."""
        if not matches_all(self.source, source.labels):
            return False
        if all(source.labels.get(n, "") == target.get(n, "") for n in self.equal):
            # Matching both sides: only another alert can inhibit it, never itself.
            return not (matches_all(self.target, source.labels) and source.labels == target)
        return False


class Inhibitor:
    """Mutes targets of any rule while a matching source alert fires.

    Sources are indexed per rule by the values of the rule's ``equal`` labels (as
    Alertmanager's inhibitor caches its sources), so ``mutes`` looks only at the
    sources that could inhibit a target: O(1) per alert in a storm, not O(alerts).
    The pipeline keeps the index current with ``update`` and ``forget``.

    >>> from inferwatch.model import Labels
    >>> rule = InhibitRule.build(InhibitRuleSpec(source_matchers=('severity="critical"',),
    ...     target_matchers=('severity="warning"',), equal=("alertname",)))
    >>> inh = Inhibitor([rule])
    >>> inh.update([Alert(Labels({"alertname": "Disk", "severity": "critical"}), starts_at=0.0)])
    >>> inh.mutes({"alertname": "Disk", "severity": "warning"}, 1.0)
    True
    """

    def __init__(self, rules: Iterable[InhibitRule], alerts: Iterable[Alert] = ()) -> None:
        self.rules = tuple(rules)
        self._sources: list[dict[tuple[str, ...], dict[str, Alert]]] = [{} for _ in self.rules]
        self._where: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        self.update(alerts)

    def update(self, alerts: Iterable[Alert]) -> None:
        """Index (or re-index) alerts that are sources of some rule."""
        for a in alerts:
            fp = fingerprint(a)
            if fp in self._where:
                self.forget([fp])
            for i, rule in enumerate(self.rules):
                if matches_all(rule.source, a.labels):
                    key = tuple(a.labels.get(n, "") for n in rule.equal)
                    self._sources[i].setdefault(key, {})[fp] = a
                    self._where.setdefault(fp, []).append((i, key))

    def forget(self, fingerprints: Iterable[str]) -> None:
        """Drop alerts from the index."""
        for fp in fingerprints:
            for i, key in self._where.pop(fp, ()):
                bucket = self._sources[i].get(key, {})
                bucket.pop(fp, None)
                if not bucket:
                    self._sources[i].pop(key, None)

    def is_source(self, fp: str) -> bool:
        """Whether the alert with fingerprint ``fp`` is a source of some rule."""
        return fp in self._where

    def inhibited_by(self, labels: Mapping[str, str], now: float) -> list[Alert]:
        """The firing source alerts that inhibit ``labels`` (Alertmanager's ``inhibitedBy``)."""
        found: dict[str, Alert] = {}
        for i, rule in enumerate(self.rules):
            if not matches_all(rule.target, labels):
                continue
            bucket = self._sources[i].get(tuple(labels.get(n, "") for n in rule.equal), {})
            found.update((fp, s) for fp, s in bucket.items()
                         if not s.resolved(now - rule.hold) and rule.inhibits(s, labels))
        return list(found.values())

    def mutes(self, labels: Mapping[str, str], now: float) -> bool:
        """Whether some firing source alert inhibits ``labels``."""
        for i, rule in enumerate(self.rules):
            if not matches_all(rule.target, labels):
                continue
            bucket = self._sources[i].get(tuple(labels.get(n, "") for n in rule.equal))
            if bucket and any(not s.resolved(now - rule.hold) and rule.inhibits(s, labels)
                              for s in bucket.values()):
                return True
        return False
