"""The seasonal baseline as Prometheus recording and alerting rules (the scale path).

For a signal ``expr`` recorded as ``baseline:<name>:value`` the rules compute,
at every evaluation, in one group (rules of a group see the earlier results):

* ``…:daily_ref``  median over the last ``days`` days of each day's median in a
  ``slot`` window centred on the same time of day (``quantile_over_time`` with
  ``offset``; days without data simply drop out);
* ``…:expected``   ``daily_ref`` + the median of recent ``value - daily_ref``
  (the robust level, re-learning a level shift);
* ``…:scale``      1.4826 · median |value − expected| over ``scale_window``, ending
  ``level_window`` ago (so that an ongoing anomaly does not widen its own band);
* ``…:tail``       the ``tail_quantile`` of |value − expected| over the same window;
* ``…:upper`` / ``…:lower``  expected ± max(band · scale, tail_factor · tail), narrowed
  by the long-memory range when ``range_horizon`` is set: ``…:slot_high`` / ``…:slot_low``
  (``max_over_time`` / ``min_over_time`` over one ``range_slot``), read back once a slot
  by a subquery over ``range_horizon`` with ``offset range_exclude`` (``…:range_high`` /
  ``…:range_low``, present once ``range_min_history`` is covered), widened by
  ``range_margin`` of the range (``…:range_pad``);

and one alert that fires when the value leaves the band on the watched side
for ``debounce`` evaluations (``for``), kept firing over ``merge_gap``.

With ``seasonal.windows`` set, each window ``N`` adds ``…:window_mean_N`` (the
mean of the last N residuals ``value - expected``), ``…:abs_window_mean_N`` and
``…:window_half_N`` (``max(window_band · 1.4826 · median, window_tail_factor ·
tail quantile, relative_floor · |expected|)`` of |window mean| over ``scale_window``,
lagged like the scale, present once ``window_min_points`` window means exist), and the alert also
fires when a window mean leaves ``±window_half_N`` on the watched side.
"""

from __future__ import annotations

import math
from typing import Any

from inferwatch.baseline._band import Direction
from inferwatch.baseline._settings import BaselineSettings
from inferwatch.model import format_duration, is_valid_metric_name

__all__ = ["promql_rules"]


def _d(seconds: float) -> str:
    return format_duration(seconds)


def _daily_ref(value: str, slot: float, days: int) -> str:
    half = slot / 2
    parts = [
        f'label_replace(quantile_over_time(0.5, {value}[{_d(slot)}] offset {_d(k * 86400 - half)}),'
        f' "baseline_day", "{k}", "", "")'
        for k in range(1, days + 1)
    ]
    return "quantile without (baseline_day) (0.5,\n  " + "\n  or ".join(parts) + "\n)"


def promql_rules(name: str, expr: str, *, config: BaselineSettings | None = None,
                 interval: float = 60.0, direction: Direction | None = None,
                 fallback: float | None = None, level_window: float = 3600.0,
                 scale_window: float = 7 * 86400.0) -> dict[str, Any]:
    """A Prometheus rule file (as a dict, dump it as YAML) with the baseline of ``expr``.

    ``name`` names the recorded series (``baseline:<name>:…``) and the alert
    (``<name>_outside_baseline``); ``interval`` is the group's evaluation
    interval, which turns the sample-count debounce into ``for``.

    >>> rules = promql_rules("api_p99", "histogram_quantile(0.99, rate(x_bucket[5m]))")
    >>> [r.get("record", r.get("alert")) for r in rules["groups"][0]["rules"]][-1]
    'api_p99_outside_baseline'
    """
    cfg = config or BaselineSettings()
    s = cfg.seasonal
    side = direction or cfg.direction
    if not is_valid_metric_name(name) or ":" in name:
        raise ValueError(f"baseline name {name!r} must be a metric name without colons")
    p = f"baseline:{name}"
    v = f"{p}:value"
    sw = _d(scale_window)
    lag = _d(level_window)  # an ongoing anomaly must not widen its own band
    records = [
        (f"{p}:value", expr),
        (f"{p}:daily_ref", _daily_ref(v, s.slot, s.days)),
        (f"{p}:deseasonalised", f"{v} - {p}:daily_ref"),
        (f"{p}:expected",
         f"{p}:daily_ref + quantile_over_time(0.5, {p}:deseasonalised[{_d(level_window)}])"),
        (f"{p}:abs_residual", f"abs({v} - {p}:expected)"),
        (f"{p}:scale", f"1.4826 * quantile_over_time(0.5, {p}:abs_residual[{sw}] offset {lag})"),
        (f"{p}:tail",
         f"quantile_over_time({s.tail_quantile:g}, {p}:abs_residual[{sw}] offset {lag})"),
        (f"{p}:half_width",
         f"({s.band:g} * {p}:scale > {s.tail_factor:g} * {p}:tail)"
         f" or {s.tail_factor:g} * {p}:tail"),
    ]
    records += _bound_records(p, v, cfg)
    records += _window_records(p, cfg, interval, sw, lag)
    rules: list[dict[str, Any]] = [{"record": r, "expr": e} for r, e in records]
    rules.append({
        "alert": f"{name}_outside_baseline",
        "expr": _alert_expr(v, p, side, fallback, s.windows),
        "for": _d(cfg.debounce * interval),
        "keep_firing_for": _d(cfg.merge_gap * interval),
        "labels": {"baseline": name},
        "annotations": {
            "summary": f"{name} left its seasonal baseline ({side})",
            "description": ("value {{ $value }} outside the learned band" if not s.windows else
                            "value or window mean residual {{ $value }} outside its learned band"),
        },
    })
    return {"groups": [{"name": f"baseline_{name}", "interval": _d(interval), "rules": rules}]}


def _bound_records(p: str, v: str, cfg: BaselineSettings) -> list[tuple[str, str]]:
    """``…:upper`` / ``…:lower``: the band, narrowed by the long-memory range when it is on.

    The range is kept as each slot's (hour's) high and low, recorded every evaluation
    and read back once a slot by a subquery over the horizon, the recent part left out.
    """
    s = cfg.seasonal
    if not s.range_horizon:
        return [(f"{p}:upper", f"{p}:expected + {p}:half_width"),
                (f"{p}:lower", f"{p}:expected - {p}:half_width")]
    span = f"[{_d(s.range_horizon - s.range_exclude)}:{_d(s.range_slot)}] offset {_d(s.range_exclude)}"
    min_slots = max(1, math.ceil((s.range_min_history - s.range_exclude) / s.range_slot))
    enough = f"count_over_time({p}:slot_high{span}) >= {min_slots}"
    floor = s.relative_floor
    return [
        (f"{p}:band_upper", f"{p}:expected + {p}:half_width"),
        (f"{p}:band_lower", f"{p}:expected - {p}:half_width"),
        (f"{p}:slot_high", f"max_over_time({v}[{_d(s.range_slot)}])"),
        (f"{p}:slot_low", f"min_over_time({v}[{_d(s.range_slot)}])"),
        (f"{p}:range_high", f"max_over_time({p}:slot_high{span}) and {enough}"),
        (f"{p}:range_low", f"min_over_time({p}:slot_low{span}) and {enough}"),
        (f"{p}:range_abs", f"(abs({p}:range_high) > abs({p}:range_low)) or abs({p}:range_low)"),
        (f"{p}:range_pad",
         f"({s.range_margin:g} * ({p}:range_high - {p}:range_low) > {floor:g} * {p}:range_abs)"
         f" or {floor:g} * {p}:range_abs"),
        # min / max of the band and the range where both exist, the band alone otherwise
        (f"{p}:upper", f"({p}:band_upper <= {p}:range_high + {p}:range_pad)"
                       f" or ({p}:range_high + {p}:range_pad and {p}:band_upper) or {p}:band_upper"),
        (f"{p}:lower", f"({p}:band_lower >= {p}:range_low - {p}:range_pad)"
                       f" or ({p}:range_low - {p}:range_pad and {p}:band_lower) or {p}:band_lower"),
    ]


def _window_records(p: str, cfg: BaselineSettings, interval: float, sw: str,
                    lag: str) -> list[tuple[str, str]]:
    """Window-mean rules: the mean of the last N residuals and its own band, per window."""
    s = cfg.seasonal
    if not s.windows:
        return []
    out = [(f"{p}:residual", f"{p}:value - {p}:expected")]
    for n in s.windows:
        # half an interval short of N intervals: exactly N samples whether the range
        # is closed at its start (Prometheus 2) or open (Prometheus 3)
        rng = _d(n * interval - interval / 2)
        absm = f"{p}:abs_window_mean_{n}"
        half = (f"({s.window_band:g} * 1.4826 * quantile_over_time(0.5, {absm}[{sw}] offset {lag})"
                f" > {s.window_tail_factor:g} * quantile_over_time({s.tail_quantile:g},"
                f" {absm}[{sw}] offset {lag}))"
                f" or {s.window_tail_factor:g} * quantile_over_time({s.tail_quantile:g},"
                f" {absm}[{sw}] offset {lag})")
        # at least the point band's relative floor, as natively (a flat series keeps a band)
        floor = f"{s.relative_floor:g} * abs({p}:expected)"
        out += [
            (f"{p}:window_mean_{n}", f"avg_over_time({p}:residual[{rng}])"),
            (absm, f"abs({p}:window_mean_{n})"),
            (f"{p}:window_half_{n}",
             f"(({half}) > {floor} or {floor})"
             f" and count_over_time({absm}[{sw}] offset {lag}) >= {s.window_min_points}"),
        ]
    return out


def _alert_expr(v: str, p: str, side: Direction, fallback: float | None,
                windows: tuple[int, ...] = ()) -> str:
    conds = []
    if side in ("above", "both"):
        conds.append(f"{v} > {p}:upper")
        conds += [f"{p}:window_mean_{n} > {p}:window_half_{n}" for n in windows]
    if side in ("below", "both"):
        conds.append(f"{v} < {p}:lower")
        conds += [f"{p}:window_mean_{n} < -{p}:window_half_{n}" for n in windows]
    expr = " or ".join(f"({c})" for c in conds)
    if fallback is not None:
        op = "<" if side == "below" else ">"
        expr += f" or ({v} {op} {fallback:g} unless {p}:expected)"
    return expr
