"""The Prometheus form of the rules: rule groups that ``promtool check rules`` accepts.

``inferwatch export prometheus`` and the replay equivalence tests both use
:func:`to_prometheus_rule_groups`, so what is tested is what is exported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inferwatch.model import format_duration
from inferwatch.rules._outlier_promql import prometheus_annotation
from inferwatch.rules._rule import Rule

__all__ = ["to_prometheus_rule_groups", "to_prometheus_rule_yaml"]


def _rule(r: Rule) -> dict[str, Any]:
    out: dict[str, Any] = {"alert": r.name, "expr": _expr(r)}
    if r.for_:
        out["for"] = format_duration(r.for_)
    if r.keep_firing_for:
        out["keep_firing_for"] = format_duration(r.keep_firing_for)
    out["labels"] = r.alert_labels
    if r.annotations:
        out["annotations"] = {k: prometheus_annotation(v, r.outlier) if r.outlier else v
                              for k, v in r.annotations.items()}
    return out


def _expr(r: Rule) -> str:
    # Hysteresis in PromQL: past the resolve threshold counts only while the rule's own alert is active.
    if r.hold_expr is None:
        return r.promql
    dropped = ", ".join(["alertname", "alertstate", *sorted(r.alert_labels)])
    return f'({r.promql}) or (({r.hold_expr}) and ignoring({dropped}) ALERTS{{alertname="{r.name}"}})'


def to_prometheus_rule_groups(
    rules: Sequence[Rule], *, group: str = "inferwatch", interval: float | None = None,
) -> dict[str, Any]:
    """``{"groups": [...]}`` with one group per dimension (``inferwatch-<dimension>``).

    A dynamic rule is exported in its fallback form (the fixed threshold used
    while no band exists); one without a fallback has no PromQL form and is
    left out (``rules check`` says so).
    """
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rules:
        if r.expr is None:
            continue
        groups.setdefault(f"{group}-{r.dimension.value}", []).append(_rule(r))
    out: list[dict[str, Any]] = []
    for name, items in groups.items():
        g: dict[str, Any] = {"name": name}
        if interval:
            g["interval"] = format_duration(interval)
        g["rules"] = items
        out.append(g)
    return {"groups": out}


def to_prometheus_rule_yaml(rules: Sequence[Rule], **kwargs: Any) -> str:
    """The rule groups as a YAML document."""
    import yaml

    return yaml.safe_dump(to_prometheus_rule_groups(rules, **kwargs), sort_keys=False,
                          allow_unicode=True, width=1000)
