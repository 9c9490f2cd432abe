"""Example slow traces on alerts: the exemplars of the series an alert's rule reads, as annotations.

An engineer paged for P99 latency wants the slow requests, not only the
number. The latency rules read the request-duration histogram, whose buckets
carry the trace ids of recent kept traces as exemplars (scraped from
OpenMetrics); ``TraceLinks`` wraps the evaluator's sink and, for each firing
alert whose rule reads series with exemplars, adds ``example_traces`` (the
slowest few trace ids of the alert's series in the last ``window_s``, with
their latencies) and ``trace_url`` (the slowest trace in the server's trace API, an
absolute URL: ``server.external_url``, else the address the server listens on).
Alerts of rules over series without exemplars pass unchanged. An outlier rule's alert
also gets ``peers_url`` (and its generator URL): the dashboard's page of the rule's peer
groups, the member side by side with its peers. An alert of a rule over the generation score
(``GenerationQualityDrop``) gets ``version_change`` instead (the model or prompt version change
behind it, the mean before and after: ``rules.version_change``) and ``example_generations`` (the
lowest-scored generation ids its series' exemplars hold).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING
from urllib.parse import quote

from inferwatch.model import metrics as catalog
from inferwatch.model import parse_matchers
from inferwatch.rules import Alert, AlertSink, Rule, version_change
from inferwatch.server.api import selectors
from inferwatch.store import Exemplar, ExemplarSeries, ExemplarStore, Store

if TYPE_CHECKING:
    from inferwatch.server._components import ServerComponents

__all__ = ["EXAMPLES", "TraceLinks", "listen_url", "score_notes", "slowest_traces", "trace_notes"]

EXAMPLES = 3
"""Trace ids (generation ids) named per alert."""
log = logging.getLogger("inferwatch.server")


def slowest_traces(found: Sequence[ExemplarSeries], limit: int = EXAMPLES) -> list[Exemplar]:
    """The exemplars with the largest values, one per trace id, slowest first."""
    seen: dict[str, Exemplar] = {}
    for ex in sorted((e for r in found for e in r.exemplars), key=lambda e: e.value, reverse=True):
        trace = ex.labels.get("trace_id", "")
        if trace and trace not in seen:
            seen[trace] = ex
    return list(seen.values())[:limit]


class TraceLinks:
    """An ``AlertSink`` adding example slow trace ids to alerts, then forwarding them to ``inner``."""

    def __init__(self, inner: AlertSink, components: Callable[[], ServerComponents], *,
                 window_s: float = 900.0, base_url: str = "",
                 words: Callable[[], tuple[str, str]] = lambda: ("en", "UTC")) -> None:
        self.inner, self._components = inner, components
        self.window_s, self.base_url = window_s, base_url.rstrip("/")
        self._words = words  # (alerting.language, alerting.timezone) now: a reload may change them

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        """Annotate the firing alerts that have example traces; forward all."""
        try:
            comps = self._components()
            rules = {r.name: r for r in comps.rules}
            store, data = comps.scrape.exemplars, comps.store
        except Exception:  # never keep an alert from its receivers
            self.inner.send(alerts, now)
            return
        self.inner.send([self._annotate(a, now, rules, store, data) for a in alerts], now)

    def _annotate(self, alert: Alert, now: float, rules: dict[str, Rule], store: ExemplarStore,
                  data: Store) -> Alert:
        rule = rules.get(alert.name)
        if rule is None or alert.resolved(now):
            return alert
        if rule.outlier is not None:  # the dashboard's side-by-side view of the member's group
            url = f"{self.base_url}/#/peers?rule={quote(rule.name)}"
            alert = replace(alert, annotations={**alert.annotations, "peers_url": url}, generator_url=url)
        labels = alert.labels.to_dict()
        if _reads_scores(rule):  # lowest, not slowest: the generations that scored worst, and why
            language, timezone = self._words()
            notes = score_notes(labels, store, data, now, self.window_s, language, timezone)
        else:
            notes = trace_notes(rule, labels, store, now, self.window_s, self.base_url)
        return replace(alert, annotations={**alert.annotations, **notes}) if notes else alert


def trace_notes(rule: Rule, labels: Mapping[str, str], store: ExemplarStore, now: float,
                window_s: float = 900.0, base_url: str = "") -> dict[str, str]:
    """``example_traces`` and ``trace_url`` of an alert of ``rule`` with ``labels`` ({}: no exemplars)."""
    found = store.select(selectors(rule.signal), now - window_s, now)
    mine = [r for r in found if all(r.series.get(k, v) == v for k, v in labels.items())]
    slow = slowest_traces(mine)
    if not slow:
        return {}
    ids = [e.labels["trace_id"] for e in slow]
    return {"example_traces": ", ".join(f"{i} ({e.value:.3g}s)" for i, e in zip(ids, slow, strict=True)),
            "trace_url": f"{base_url.rstrip('/')}/api/v1/traces/{ids[0]}"}


def _reads_scores(rule: Rule) -> bool:
    names = {m.value for ms in selectors(rule.signal) for m in ms if m.name == "__name__"}
    return any(n.startswith(catalog.GENERATION_SCORE.name) for n in names)


def score_notes(labels: Mapping[str, str], store: ExemplarStore, data: Store, now: float,
                window_s: float = 900.0, language: str = "en", timezone: str = "UTC") -> dict[str, str]:
    """``version_change`` (in ``language``, its time in ``timezone``) and ``example_generations`` of a
    score alert with ``labels`` (service, route, name); either left out when there is nothing to say
    (a failure reading the store: logged, none)."""
    notes: dict[str, str] = {}
    try:
        change = version_change(data, labels, now)
    except Exception:
        log.exception("the version change behind %s could not be read", labels.get("alertname"))
        change = None
    if change is not None:
        notes["version_change"] = change.note(labels.get("name", "score"), language, timezone)
    scope = {k: labels[k] for k in ("service", "route", "name") if k in labels}
    found = store.select([parse_matchers(f'{{__name__="{catalog.GENERATION_SCORE.name}_bucket"}}')],
                         now - window_s, now)
    worst = sorted((e for r in found if all(r.series.get(k) == v for k, v in scope.items())
                    for e in r.exemplars if e.labels.get("generation_id")), key=lambda e: e.value)
    if worst:
        notes["example_generations"] = ", ".join(
            f"{e.labels['generation_id']} ({e.value:.3g})" for e in worst[:EXAMPLES])
    return notes


def listen_url(host: str, port: int) -> str:
    """The server's own base URL, for when ``server.external_url`` is unset (a wildcard: the host's name)."""
    if host in ("", "0.0.0.0", "::"):
        host = socket.getfqdn()
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
