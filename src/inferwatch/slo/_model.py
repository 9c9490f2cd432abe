"""One SLO, whichever way it was declared: a Sloth spec's entry or a config shorthand."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from inferwatch.settings import DEFAULT_MIN_EVENTS, SloTiers

__all__ = ["WINDOW_TEMPLATE", "AlertSpec", "EventsSli", "RawSli", "Slo"]

# Sloth's query template for the window ("{{.window}}", Go template syntax, spaces allowed).
WINDOW_TEMPLATE = "{{.window}}"


@dataclass(frozen=True)
class EventsSli:
    """Error and total event rates, each a PromQL query with ``{{.window}}`` for the range."""

    error_query: str
    total_query: str


@dataclass(frozen=True)
class RawSli:
    """An error ratio as one PromQL query with ``{{.window}}`` (no event count: no traffic guard)."""

    error_ratio_query: str


@dataclass(frozen=True)
class AlertSpec:
    """Sloth's ``alerting`` block: the alert name, labels and annotations (common, page, ticket)."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    page_labels: Mapping[str, str] = field(default_factory=dict)
    page_annotations: Mapping[str, str] = field(default_factory=dict)
    ticket_labels: Mapping[str, str] = field(default_factory=dict)
    ticket_annotations: Mapping[str, str] = field(default_factory=dict)
    page: bool = True
    ticket: bool = True


@dataclass(frozen=True)
class Slo:
    """A service-level objective ready to become rules.

    ``objective`` is a percentage as in Sloth (99.9); ``source`` names where it
    was declared (``slos[0]``, ``specs/payments.yaml: slos[1]``) for errors.
    """

    service: str
    name: str
    objective: float
    sli: EventsSli | RawSli
    alerting: AlertSpec
    period: float = 30 * 86400.0
    labels: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    min_events: int = DEFAULT_MIN_EVENTS
    tiers: SloTiers = field(default_factory=SloTiers)
    source: str = ""
    kind: str = "sloth"  # availability, latency, time_to_first_token, or sloth (a spec file)
    downtime: str = ""
    """The series whose failures count as downtime (``probe_success{service="x"}``, ``up{...}``), or ""."""

    @property
    def id(self) -> str:
        """Sloth's ``sloth_id``: ``<service>-<name>``."""
        return f"{self.service}-{self.name}"

    @property
    def error_budget(self) -> float:
        """The error budget as a ratio (``1 - objective``), computed as Sloth does."""
        return (100.0 - self.objective) / 100.0

    @property
    def period_days(self) -> int:
        """The period in days (30 or 28)."""
        return round(self.period / 86400.0)

    @property
    def sloth_labels(self) -> dict[str, str]:
        """``sloth_id``, ``sloth_service`` and ``sloth_slo``: the labels every SLO series carries."""
        return {"sloth_id": self.id, "sloth_service": self.service, "sloth_slo": self.name}
