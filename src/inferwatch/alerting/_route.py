"""The route tree with Alertmanager's semantics, and an alert as seen through it (``AlertView``).

An alert enters at the root (which matches everything) and descends into the
first child whose matchers hold; with ``continue`` the following siblings are
tried too. A node whose children all miss is the match itself. Unset options
inherit from the parent; ``group_by: ['...']`` groups by every label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from inferwatch.model import Labels, Matcher, matches_all, parse_matchers
from inferwatch.rules import Alert
from inferwatch.settings import RouteSpec

__all__ = ["AlertView", "Route", "RouteOptions"]

# Alertmanager's defaults, and inferwatch's grouping (DESIGN.md).
_ROOT_DEFAULTS = {"group_wait": 30.0, "group_interval": 300.0, "repeat_interval": 4 * 3600.0}
_DEFAULT_GROUP_BY = ("alertname", "service")


@dataclass(frozen=True, slots=True)
class RouteOptions:
    """What a matching route decides for an alert."""

    receiver: str
    group_by: tuple[str, ...]
    group_wait: float
    group_interval: float
    repeat_interval: float
    escalation: str | None = None
    mute_time_intervals: tuple[str, ...] = ()  # the route's own (Alertmanager 0.25 does not inherit them)
    active_time_intervals: tuple[str, ...] = ()

    @property
    def group_by_all(self) -> bool:
        """``group_by: ['...']``: every label is a group label."""
        return self.group_by == ("...",)

    def group_labels(self, labels: Labels) -> Labels:
        """The labels of ``labels`` that identify its group."""
        return labels if self.group_by_all else labels.keep(self.group_by)


class Route:
    """A built node of the route tree.

    >>> child = RouteSpec(matchers=('tier="P0"',), receiver="phone")
    >>> root = Route.build(RouteSpec(receiver="ops", routes=(child,)))
    >>> [r.options.receiver for r in root.match(Labels({"tier": "P0"}))]
    ['phone']
    """

    def __init__(self, spec: RouteSpec, options: RouteOptions, key: str, parent: Route | None) -> None:
        self.options = options
        self.matchers: tuple[Matcher, ...] = tuple(m for t in spec.matchers for m in parse_matchers(t))
        self.continue_ = spec.continue_
        self.key = key
        self.parent = parent
        self.children: list[Route] = []

    @classmethod
    def build(cls, spec: RouteSpec) -> Route:
        """Build the tree from the root's spec."""
        root_opts = RouteOptions(
            receiver=spec.receiver or "terminal",
            group_by=spec.group_by if spec.group_by is not None else _DEFAULT_GROUP_BY,
            group_wait=_pick(spec.group_wait, _ROOT_DEFAULTS["group_wait"]),
            group_interval=_pick(spec.group_interval, _ROOT_DEFAULTS["group_interval"]),
            repeat_interval=_pick(spec.repeat_interval, _ROOT_DEFAULTS["repeat_interval"]),
            escalation=spec.escalation,
        )
        root = cls(spec, root_opts, "{}", None)
        root._add_children(spec)
        return root

    def _add_children(self, spec: RouteSpec) -> None:
        for i, child_spec in enumerate(spec.routes):
            p = self.options
            opts = RouteOptions(
                receiver=child_spec.receiver or p.receiver,
                group_by=child_spec.group_by if child_spec.group_by is not None else p.group_by,
                group_wait=_pick(child_spec.group_wait, p.group_wait),
                group_interval=_pick(child_spec.group_interval, p.group_interval),
                repeat_interval=_pick(child_spec.repeat_interval, p.repeat_interval),
                escalation=child_spec.escalation or p.escalation,
                mute_time_intervals=child_spec.mute_time_intervals,
                active_time_intervals=child_spec.active_time_intervals,
            )
            inner = ",".join(str(m) for t in child_spec.matchers for m in parse_matchers(t))
            child = Route(child_spec, opts, f"{self.key}/{{{inner}}}/{i}", self)
            child._add_children(child_spec)
            self.children.append(child)

    def match(self, labels: Mapping[str, str]) -> list[Route]:
        """The routes an alert with ``labels`` goes to, in tree order."""
        if not matches_all(self.matchers, labels):
            return []
        found: list[Route] = []
        for child in self.children:
            hit = child.match(labels)
            found.extend(hit)
            if hit and not child.continue_:
                break
        return found or [self]

    def walk(self) -> list[Route]:
        """This node and every descendant, depth first."""
        return [self, *(r for c in self.children for r in c.walk())]


def _pick(value: float | None, inherited: float) -> float:
    return inherited if value is None else value


@dataclass(frozen=True, slots=True)
class AlertView:
    """An alert not yet ended, where it is routed, and what mutes it (API v2's read side)."""

    alert: Alert
    updated_at: float
    routes: tuple[Route, ...]
    silenced_by: tuple[str, ...]
    inhibited_by: tuple[Alert, ...]

    @property
    def receivers(self) -> list[str]:
        """The receivers of the routes the alert goes to, in tree order."""
        return [r.options.receiver for r in self.routes]

    @property
    def state(self) -> str:
        """``suppressed`` when silenced or inhibited, else ``active`` (Alertmanager's states)."""
        return "suppressed" if self.silenced_by or self.inhibited_by else "active"
