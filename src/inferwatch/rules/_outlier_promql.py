"""The PromQL form of an outlier rule, and its annotations as Prometheus templates.

For ``peers_by: [model]``, ``tolerance: 3``, ``min_peers: 3``, ``min_deviation: 0.05``
and ``direction: both``, with ``M = (expr) >= -Inf`` (the members, NaN dropped)::

    MED = quantile by (model) (0.5, M)
    MAD = quantile by (model) (0.5, abs(M - on (model) group_left () MED))

    M and (abs(M - on (model) group_left () MED) > on (model) group_left () (4.4478 * MAD))
      and (abs(M - on (model) group_left () MED) > 0.05)
      and on (model) (count by (model) (M) >= 3)

(4.4478 is ``tolerance × 1.4826``, the scaled MAD's constant written out.) The
alert's value is the member's own. ``$median``, ``$spread`` and ``$peers`` in
annotations become ``query`` templates over the same expressions, filtered to the
alert's group, so Prometheus writes the same text inferwatch does. ``dbscan``
has no PromQL form (its clusters chain), nor has ``change:`` (it keeps each
member's recent history and the group's averaged spread as state); such a rule
is not exported (``rules check`` lists it).
"""

from __future__ import annotations

import re

from inferwatch.rules._outlier import PEERS_SHOWN, tolerance_factor
from inferwatch.settings import MAD_SCALE, OutlierSpec

__all__ = ["outlier_condition", "prometheus_annotation"]


def _members(spec: OutlierSpec) -> str:
    return f"(({spec.expr}) >= -Inf)"


def _on(spec: OutlierSpec) -> str:
    return ", ".join(spec.peers_by)


def _median(spec: OutlierSpec) -> str:
    return f"quantile by ({_on(spec)}) (0.5, {_members(spec)})"


def _deviation(spec: OutlierSpec) -> str:
    return f"({_members(spec)} - on ({_on(spec)}) group_left () {_median(spec)})"


def _mad(spec: OutlierSpec) -> str:
    return f"quantile by ({_on(spec)}) (0.5, abs{_deviation(spec)})"


def _side(spec: OutlierSpec) -> str:
    dev = _deviation(spec)
    return {"above": dev, "below": f"-{dev}", "both": f"abs{dev}"}[spec.direction]


def outlier_condition(spec: OutlierSpec) -> str | None:
    """The alert expression in PromQL (``None`` for ``dbscan`` and ``change``, which have none)."""
    if spec.algorithm != "mad" or spec.change is not None:
        return None
    g, m, side = _on(spec), _members(spec), _side(spec)
    return (f"{m} and ({side} > on ({g}) group_left () ({tolerance_factor(spec)!r} * {_mad(spec)}))"
            f" and ({side} > {spec.min_deviation!r})"
            f" and on ({g}) (count by ({g}) ({m}) >= {spec.min_peers})")


_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.DOTALL)
_FORMAT = r'"(%[-+ #0]?\d{0,2}\.\d{1,2}[efgEG])"'
_NUMBER = re.compile(rf"^(?:\$(median|spread)(?:\s*\|\s*printf\s+{_FORMAT})?"
                     rf"|printf\s+{_FORMAT}\s+\$(median|spread))$")


def _same_group(spec: OutlierSpec, *more: str) -> str:
    conds = [f"(eq .Labels.{n} $labels.{n})" for n in spec.peers_by] + list(more)
    return conds[0][1:-1] if len(conds) == 1 else "and " + " ".join(conds)


def _number(spec: OutlierSpec, which: str, fmt: str | None) -> str:
    expr = _median(spec) if which == "median" else f"{MAD_SCALE!r} * {_mad(spec)}"
    shown = f'.Value | printf "{fmt}"' if fmt else ".Value"
    return (f"{{{{ range query `{expr}` }}}}{{{{ if {_same_group(spec)} }}}}{{{{ {shown} }}}}"
            "{{ end }}{{ end }}")


def _peers(spec: OutlierSpec) -> str:
    mem, n = spec.member, PEERS_SHOWN
    cond = _same_group(spec, f"(ne .Labels.{mem} $labels.{mem})")
    return ('{{ $n := "" }}'
            f'{{{{ range query `{_members(spec)}` | sortByLabel "{mem}" }}}}{{{{ if {cond} }}}}'
            f'{{{{ if lt (len $n) {n} }}}}{{{{ if $n }}}} {{{{ end }}}}'
            f'{{{{ .Labels.{mem} }}}}={{{{ .Value | printf "%.3g" }}}}'
            f'{{{{ else if eq (len $n) {n} }}}} …{{{{ end }}}}{{{{ $n = print $n "." }}}}'
            "{{ end }}{{ end }}")


def prometheus_annotation(text: str, spec: OutlierSpec) -> str:
    """``text`` with ``$median``, ``$spread`` and ``$peers`` written as Prometheus ``query`` templates."""
    def sub(m: re.Match[str]) -> str:
        action = m.group(1)
        if action == "$peers":
            return _peers(spec)
        num = _NUMBER.match(action)
        if num:
            return _number(spec, num.group(1) or num.group(4), num.group(2) or num.group(3))
        return m.group(0)

    return _ACTION.sub(sub, text)
