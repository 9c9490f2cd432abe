"""Where each SLO stands now, read back from its recorded series: SLI, budget left, burn per window."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from inferwatch.rules import EvalError, QueryEngine, parse_promql
from inferwatch.slo._generate import ALERT_WINDOWS, SLI_WINDOWS, burn_factor, window_name
from inferwatch.slo._model import Slo
from inferwatch.store import Store

__all__ = ["slo_status"]


def _num(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def _value(engine: QueryEngine, metric: str, slo: Slo, t: float) -> float | None:
    try:
        res = engine.instant(parse_promql(f'{metric}{{sloth_id="{slo.id}"}}'), t)
    except EvalError:
        return None
    if not isinstance(res, list) or not res:
        return None
    return _num(max(v for _, v in res))


def _query(engine: QueryEngine, text: str, t: float) -> float | None:
    try:
        res = engine.instant(parse_promql(text), t)
    except EvalError:
        return None
    return _num(max(v for _, v in res)) if isinstance(res, list) and res else None


def _downtime(slo: Slo, engine: QueryEngine, t: float) -> dict[str, Any] | None:
    """Which series counted the service's downtime, and the share of the 5m window and the period it
    was unreachable (the period: over the data the store holds, as the period's SLI is)."""
    if not slo.downtime:
        return None
    share = {w: _query(engine, f"1 - avg(avg_over_time({slo.downtime}[{w}]))", t)
             for w in ("5m", window_name(slo.period))}
    return {"source": slo.downtime, "unreachable_5m": share["5m"],
            "unreachable_period": share[window_name(slo.period)]}


def _coverage(slo: Slo, engine: QueryEngine, t: float) -> float | None:
    """The share of the period the SLI was recorded for: the samples of its 5m series over the period
    times their spacing, read from the last minute (or 5 minutes) when data covers it whole; None
    under a minute of data (a fresh install's 30 minutes of a 30-day SLO: 0.0007)."""
    series = f'slo:sli_error:ratio_rate5m{{sloth_id="{slo.id}"}}'
    held = _query(engine, f"count_over_time({series}[{window_name(slo.period)}])", t)
    for window in (60.0, 300.0):
        recent = _query(engine, f"count_over_time({series}[{window_name(window)}])", t)
        # a range holds both its ends: n samples a step apart span n - 1 steps
        if held and recent and recent >= 3 and held > recent:
            return min(1.0, (held - 1) * window / (recent - 1) / slo.period)
    return None


def _burning(slo: Slo, burn: Mapping[str, float | None]) -> list[str]:
    """The alerts whose window pairs both burn over their factor now (the traffic guard aside)."""
    out = []
    for kind, _, pairs in ALERT_WINDOWS:
        for w in pairs:
            factor = burn_factor(w, slo.period)
            s, lg = burn.get(window_name(w.short)), burn.get(window_name(w.long))
            if s is not None and lg is not None and s > factor and lg > factor:
                out.append(kind)
                break
    return out


def _one(slo: Slo, engine: QueryEngine, t: float, alerts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    windows = [*SLI_WINDOWS, slo.period]
    ratios = {window_name(w): _value(engine, f"slo:sli_error:ratio_rate{window_name(w)}", slo, t)
              for w in windows}
    budget = slo.error_budget
    burn = {w: (None if r is None else r / budget) for w, r in ratios.items()}
    five = ratios["5m"]
    coverage = _coverage(slo, engine, t)
    return {
        "id": slo.id, "service": slo.service, "name": slo.name, "kind": slo.kind,
        "objective": slo.objective, "error_budget": budget, "period": window_name(slo.period),
        "description": slo.description, "min_events": slo.min_events,
        "sli": None if five is None else 1 - five,
        "budget_remaining": _value(engine, "slo:period_error_budget_remaining:ratio", slo, t),
        "data_coverage": coverage,
        "observed_seconds": None if coverage is None else coverage * slo.period,
        "windows": [{"window": w, "error_ratio": ratios[w], "burn_rate": burn[w]} for w in ratios],
        "burning": _burning(slo, burn),
        "tiers": {k: getattr(slo.tiers, k).value for k in ("fast_page", "slow_page", "ticket")},
        "alerts": [a for a in alerts if a.get("labels", {}).get("sloth_id") == slo.id],
        "errors_from": "inferwatch_requests_total (5xx)" if slo.kind == "availability" else "",
        "downtime": _downtime(slo, engine, t),
    }


def slo_status(slos: Iterable[Slo], store: Store, t: float,
               alerts: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """Each SLO's state at ``t`` (JSON-ready); ``alerts``: active alerts as ``{"labels": ...}``.

    ``sli`` is the share of good events over the last 5 minutes;
    ``budget_remaining`` the share of the period's budget left (negative once
    spent), computed over the data observed: ``data_coverage`` is the share of the
    period that data covers (``observed_seconds`` the time), so a fresh install's
    budget rests on its first minutes, and says so; ``burning`` the alerts whose
    windows both burn over their factor;
    ``downtime`` (availability) the series that counted the time the service was
    unreachable and that time's share of the 5m window and of the period.
    """
    engine = QueryEngine(store)
    return [_one(s, engine, t, alerts) for s in slos]
