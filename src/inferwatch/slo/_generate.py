"""An SLO as rules with Sloth's names: SLI recordings, metadata recordings, burn-rate alerts.

The alert windows and factors are the SRE Workbook's (ch. 5, "multiwindow,
multi-burn-rate alerts") as Sloth writes them: a factor is the share of the
period's budget an alert allows its long window to spend, times the period
over that window. For 30 days:

    =========  ======  =====  ======  ======  ======
    alert      budget  long   short   factor  tier
    =========  ======  =====  ======  ======  ======
    fast page  2 %     1h     5m      14.4    P0
    slow page  5 %     6h     30m     6       P1
    ticket     10 %    1d     2h      3       P2
    ticket     10 %    3d     6h      1       P2
    =========  ======  =====  ======  ======  ======

An SLO read from a Sloth spec keeps Sloth's alerts as ``sloth generate`` writes them: every
alert is named by the spec's ``alerting.name``, told apart by ``sloth_severity`` (``page`` or
``ticket``), with the spec's alert, ``page_alert`` and ``ticket_alert`` labels and
annotations over Sloth's default ``title`` and ``summary``. Its page alert's two window pairs
are two rules of that one name, so the fast one can be P0 and the slow one P1: the tier
follows the labels (``sloth_severity`` and ``slo_alert``), never the name. A ``slos:``
shorthand names its alerts ``<name>FastBurn``, ``<name>SlowBurn`` and ``<name>Ticket``. The
faster alert inhibits the slower ones by ``slo_alert`` within one ``sloth_id``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from inferwatch._exceptions import ConfigError
from inferwatch.model import Dimension, Tier, format_duration
from inferwatch.promql import Expr
from inferwatch.rules import PromQLError, RecordingRule, Rule, parse_promql
from inferwatch.slo._model import WINDOW_TEMPLATE, EventsSli, Slo

__all__ = ["ALERT_WINDOWS", "SLI_WINDOWS", "AlertWindows", "SloRules", "burn_factor", "slo_rules",
           "sloth_annotations", "window_name"]

_H = 3600.0
SLI_WINDOWS: tuple[float, ...] = (300.0, 1800.0, _H, 2 * _H, 6 * _H, 24 * _H, 72 * _H)


@dataclass(frozen=True)
class AlertWindows:
    """One window pair of an alert: the share of budget it allows over ``long``."""

    budget_percent: float
    long: float
    short: float


# (kind, label value, window pairs): the Workbook's table, Sloth's default windows.
ALERT_WINDOWS: tuple[tuple[str, str, tuple[AlertWindows, ...]], ...] = (
    ("fast_page", "page", (AlertWindows(2, _H, 300.0),)),
    ("slow_page", "page", (AlertWindows(5, 6 * _H, 1800.0),)),
    ("ticket", "ticket", (AlertWindows(10, 24 * _H, 2 * _H), AlertWindows(10, 72 * _H, 6 * _H))),
)
_SUFFIX = {"fast_page": "FastBurn", "slow_page": "SlowBurn", "ticket": "Ticket"}


def burn_factor(w: AlertWindows, period: float) -> float:
    """The burn-rate factor of a window pair: 14.4, 6, 3, 1 for 30 days."""
    return (w.budget_percent * (period / _H)) / (100.0 * (w.long / _H))


@dataclass(frozen=True)
class SloRules:
    """The rules of some SLOs: recordings (in evaluation order), alerts, and the Prometheus groups."""

    recordings: tuple[RecordingRule, ...]
    alerts: tuple[Rule, ...]
    slo_ids: Mapping[str, str] = field(default_factory=dict)  # an alert's uid -> its SLO's sloth_id

    def slo_id(self, alert: Rule) -> str:
        """The ``sloth_id`` of the SLO an alert belongs to."""
        return self.slo_ids.get(alert.uid) or alert.labels.get("sloth_id", "")

    def prometheus_groups(self) -> list[dict[str, object]]:
        """Rule groups as Prometheus writes them (one recording and one alert group per SLO)."""
        groups: dict[str, list[dict[str, object]]] = {}
        for r in self.recordings:
            groups.setdefault(r.group, []).append(
                {"record": r.record, "expr": r.promql, "labels": dict(r.labels)})
        for a in self.alerts:
            item: dict[str, object] = {"alert": a.name, "expr": a.text or a.promql, "labels": a.alert_labels}
            if a.annotations:
                item["annotations"] = dict(a.annotations)
            groups.setdefault(f"sloth-slo-alerts-{self.slo_id(a)}", []).append(item)
        return [{"name": name, "rules": rules} for name, rules in groups.items()]


def window_name(seconds: float) -> str:
    """A window as Sloth names it: 5m, 1h, 1d, 30d (never 4w2d)."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return format_duration(seconds)


def _query(template: str, window: float) -> str:
    return template.replace(WINDOW_TEMPLATE, window_name(window))


def _sel(slo: Slo) -> str:
    return ", ".join(f'{k}="{v}"' for k, v in slo.sloth_labels.items())


def _parse(text: str, slo: Slo, what: str) -> Expr:
    try:
        return parse_promql(text)
    except PromQLError as exc:
        raise ConfigError(f"{slo.source}: {what}: {exc}") from None


def _rec(slo: Slo, record: str, text: str, labels: dict[str, str], group: str) -> RecordingRule:
    expr = _parse(text, slo, record)
    return RecordingRule(record, expr, MappingProxyType(labels), group, text)


def _sli_recordings(slo: Slo) -> list[RecordingRule]:
    base = {**slo.labels, **slo.sloth_labels}
    group = f"sloth-slo-sli-recordings-{slo.id}"
    out = []
    for w in SLI_WINDOWS:
        if isinstance(slo.sli, EventsSli):
            text = f"({_query(slo.sli.error_query, w)})\n/\n({_query(slo.sli.total_query, w)})"
        else:
            text = f"({_query(slo.sli.error_ratio_query, w)})"
        labels = {**base, "sloth_window": window_name(w)}
        out.append(_rec(slo, f"slo:sli_error:ratio_rate{window_name(w)}", text, labels, group))
    p, sel = window_name(slo.period), _sel(slo)
    five = f"slo:sli_error:ratio_rate5m{{{sel}}}"
    text = f"sum_over_time({five}[{p}])\n/ ignoring (sloth_window)\ncount_over_time({five}[{p}])"
    out.append(_rec(slo, f"slo:sli_error:ratio_rate{p}", text, {**base, "sloth_window": p}, group))
    return out


def _meta_recordings(slo: Slo, version: str) -> list[RecordingRule]:
    base = {**slo.labels, **slo.sloth_labels}
    group = f"sloth-slo-meta-recordings-{slo.id}"
    sel, p = _sel(slo), window_name(slo.period)
    objective = slo.objective / 100.0
    per_budget = f"/ on(sloth_id, sloth_slo, sloth_service) group_left\nslo:error_budget:ratio{{{sel}}}"
    info = {**base, "sloth_mode": "cli-gen-prom", "sloth_objective": f"{slo.objective:g}",
            "sloth_spec": "prometheus/v1", "sloth_version": version}
    items = [
        ("slo:objective:ratio", f"vector({objective!r})", base),
        ("slo:error_budget:ratio", f"vector(1-{objective!r})", base),
        ("slo:time_period:days", f"vector({slo.period_days})", base),
        ("slo:current_burn_rate:ratio", f"slo:sli_error:ratio_rate5m{{{sel}}}\n{per_budget}", base),
        ("slo:period_burn_rate:ratio", f"slo:sli_error:ratio_rate{p}{{{sel}}}\n{per_budget}", base),
        ("slo:period_error_budget_remaining:ratio", f"1 - slo:period_burn_rate:ratio{{{sel}}}", base),
        ("sloth_slo_info", "vector(1)", info),
    ]
    return [_rec(slo, name, text, dict(labels), group) for name, text, labels in items]


def _go_float(v: float) -> str:
    """A float as Go's ``%v`` prints it in Sloth's template (``6``, ``14.4``, ``0.0009999999999999432``)."""
    text = repr(float(v))
    return text.removesuffix(".0") if "e" not in text else text


def _pair(slo: Slo, w: AlertWindows) -> str:
    factor = f"({_go_float(burn_factor(w, slo.period))} * {_go_float(slo.error_budget)})"
    sel = _sel(slo)
    short, long = (f"max(slo:sli_error:ratio_rate{window_name(x)}{{{sel}}} > {factor}) without (sloth_window)"
                   for x in (w.short, w.long))
    cond = f"(\n    {short}\n    and\n    {long}\n)"
    if isinstance(slo.sli, EventsSli) and slo.min_events > 0:
        # The traffic guard: the long window must hold min_events events (rate x seconds).
        total = _query(slo.sli.total_query, w.long)
        cond = f"(\n{cond}\nand on ()\n    (({total}) * {w.long:g} >= {slo.min_events})\n)"
    return cond


def sloth_annotations(severity: str) -> dict[str, str]:
    """The annotations Sloth gives every alert, before the spec's own (which win)."""
    who = "{{$labels.sloth_service}} {{$labels.sloth_slo}}"
    return {"title": f"({severity}) {who} SLO error budget burn rate is too fast.",
            "summary": f"{who} SLO error budget burn rate is over expected."}


def _alert(slo: Slo, kind: str, severity: str, pairs: tuple[AlertWindows, ...]) -> Rule:
    a = slo.alerting
    text = "\nor\n".join(_pair(slo, w) for w in pairs)
    if slo.downtime:
        # While every probe (or target) of the service fails, the outage is ProbeFailing's (or
        # TargetDown's) to page: the burn it causes stays quiet, and an inhibit rule holds it
        # quiet for its short window after (docs/probes.md: "One outage, one message").
        text = f"(\n{text}\n)\nunless on ()\n    (max({slo.downtime}) == 0)"
    expr = _parse(text, slo, f"{kind} alert")
    tier: Tier = getattr(slo.tiers, kind)
    extra = a.page_labels if severity == "page" else a.ticket_labels
    notes = {**a.annotations, **(a.page_annotations if severity == "page" else a.ticket_annotations)}
    sloth = slo.kind == "sloth"
    if sloth:  # Sloth's own labels and annotations, the spec's winning; the series bring sloth_id
        notes = {**sloth_annotations(severity), **notes}
        labels = {"service": slo.service, "sloth_severity": severity, **a.labels, **extra, "slo_alert": kind}
    else:
        labels = {"service": slo.service, **a.labels, **extra, **slo.sloth_labels,
                  "sloth_severity": severity, "slo_alert": kind}
    for reserved in ("tier", "dimension", "alertname", *(() if sloth else ("severity",))):
        labels.pop(reserved, None)  # inferwatch sets these (a Sloth spec may name its severity)
    name = a.name if sloth else f"{a.name}{_SUFFIX[kind]}"
    key = f'{name}{{sloth_id="{slo.id}",slo_alert="{kind}"}}' if sloth else ""
    return Rule(name=name, dimension=Dimension.SERVICE, tier=tier, signal=expr,
                comparison=">", threshold=None, labels=MappingProxyType(labels),
                annotations=MappingProxyType(notes), condition=expr, key=key, text=text)


def _alerts(slo: Slo) -> list[Rule]:
    out = []
    for kind, severity, pairs in ALERT_WINDOWS:
        if (severity == "page" and slo.alerting.page) or (severity == "ticket" and slo.alerting.ticket):
            out.append(_alert(slo, kind, severity, pairs))
    return out


def slo_rules(slos: list[Slo], *, version: str = "inferwatch") -> SloRules:
    """Every SLO's recordings (SLI windows first, then metadata) and alerts."""
    recordings: list[RecordingRule] = []
    alerts: list[Rule] = []
    ids = [s.id for s in slos]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        where = [s.source for s in slos if s.id == twice[0]]
        raise ConfigError(f"SLO {twice[0]!r} (sloth_id) is declared twice: {', '.join(where)}")
    slo_ids: dict[str, str] = {}
    for slo in slos:
        recordings += _sli_recordings(slo)
        recordings += _meta_recordings(slo, version)
        mine = _alerts(slo)
        alerts += mine
        slo_ids.update((a.uid, slo.id) for a in mine)
    names = [a.uid for a in alerts]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"SLO alert {dup[0]!r} is generated twice: give the SLOs different alerting names")
    return SloRules(tuple(recordings), tuple(alerts), MappingProxyType(slo_ids))
