"""Inhibition: a firing source alert mutes target alerts that share its ``equal`` labels.

Alertmanager's semantics: labels absent from both alerts count as equal, and
an alert that matches both sides of a rule never inhibits itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from inferwatch.config._alerting import InhibitRuleSpec
from inferwatch.model import Matcher, matches_all, parse_matchers
from inferwatch.rules import Alert

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

    @classmethod
    def build(cls, spec: InhibitRuleSpec) -> InhibitRule:
        """From the config spec."""
        return cls(
            tuple(m for t in spec.source_matchers for m in parse_matchers(t)),
            tuple(m for t in spec.target_matchers for m in parse_matchers(t)),
            spec.equal,
        )

    def inhibits(self, source: Alert, target: Mapping[str, str]) -> bool:
        """Whether firing ``source`` mutes an alert with labels ``target``."""
        if not matches_all(self.source, source.labels):
            return False
        if all(source.labels.get(n, "") == target.get(n, "") for n in self.equal):
            # Matching both sides: only another alert can inhibit it, never itself.
            return not (matches_all(self.target, source.labels) and source.labels == target)
        return False


class Inhibitor:
    """Mutes targets of any rule while a matching source alert fires.

    ``alerts`` returns the pipeline's current alerts (firing and resolved).
    """

    def __init__(self, rules: Iterable[InhibitRule], alerts: Callable[[], Iterable[Alert]]) -> None:
        self.rules = tuple(rules)
        self._alerts = alerts

    def mutes(self, labels: Mapping[str, str], now: float) -> bool:
        """Whether some firing source alert inhibits ``labels``."""
        rules = [r for r in self.rules if matches_all(r.target, labels)]
        if not rules:
            return False
        sources = [a for a in self._alerts() if not a.resolved(now)]
        return any(r.inhibits(s, labels) for r in rules for s in sources)
