"""Prometheus 2.42's status endpoints and its field formats for ``targets``, ``rules`` and ``alerts``.

Times are RFC 3339 strings, durations in seconds as numbers where Prometheus
gives numbers (``duration``, ``evaluationTime``) and ``"5s"`` strings where it
gives strings (``scrapeInterval``); ``status/buildinfo`` reports the
Prometheus version whose API this server speaks, so Grafana picks its
Prometheus 2.42 feature set.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import yaml
from starlette.routing import BaseRoute, Route

from inferwatch import __version__
from inferwatch.model import METRIC_NAME_LABEL, Matcher, MatchOp, format_duration
from inferwatch.promql import DEFAULT_MAX_SAMPLES
from inferwatch.rules import PeerGroup
from inferwatch.server._runtime import Server
from inferwatch.server.api._prom_api import DEFAULT_QUERY_TIMEOUT_S, api_handler
from inferwatch.server.api._prom_params import Params, format_api_float

__all__ = ["PROMETHEUS_API_VERSION", "StatusApi", "prom_status_routes", "rfc3339"]

PROMETHEUS_API_VERSION = "2.42.0"
_ZERO_TIME = "0001-01-01T00:00:00Z"


def rfc3339(t: float | None) -> str:
    """Unix seconds as RFC 3339 in UTC with Go's trailing-zero trimming (Go's zero time for ``None``)."""
    if t is None:
        return _ZERO_TIME
    s = datetime.fromtimestamp(t, UTC).isoformat(timespec="microseconds").replace("+00:00", "")
    s = s.rstrip("0").rstrip(".") if "." in s else s
    return s + "Z"


class StatusApi:
    """Prometheus's ``status/*``, ``targets``, ``rules`` and ``alerts``: one method an endpoint."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.started = server.clock.now()

    def routes(self) -> list[BaseRoute]:
        """Every endpoint of this API, registered here and nowhere else."""
        endpoints = [("/api/v1/status/buildinfo", self.buildinfo), ("/api/v1/status/config", self.config),
                     ("/api/v1/status/flags", self.flags), ("/api/v1/status/runtimeinfo", self.runtimeinfo),
                     ("/api/v1/status/tsdb", self.tsdb), ("/api/v1/targets", self.targets),
                     ("/api/v1/rules", self.rules), ("/api/v1/alerts", self.alerts)]
        return [Route(path, api_handler(fn), methods=["GET", "POST"]) for path, fn in endpoints]

    def buildinfo(self, _: Params) -> Any:
        """The Prometheus version whose API this server speaks."""
        return {"version": PROMETHEUS_API_VERSION, "revision": f"inferwatch-{__version__}", "branch": "HEAD",
                "buildUser": "inferwatch", "buildDate": "20230201-00:00:00", "goVersion": "go1.19.5"}

    def config(self, _: Params) -> Any:
        """The scrape jobs as a ``prometheus.yml``."""
        comps = self.server.components
        jobs: dict[str, list[str]] = {}
        for h in comps.scrape.targets():
            jobs.setdefault(h.job, []).append(h.url.split("://", 1)[-1].split("/", 1)[0])
        doc = {"global": {"scrape_interval": "15s", "evaluation_interval":
                          format_duration(comps.config.server.evaluation_interval)},
               "scrape_configs": [{"job_name": j, "static_configs": [{"targets": ts}]}
                                  for j, ts in jobs.items()]}
        return {"yaml": yaml.safe_dump(doc, sort_keys=False)}

    def flags(self, _: Params) -> Any:
        """Prometheus's flags that have a meaning here."""
        comps = self.server.components
        return {
            "query.lookback-delta": "5m", "query.max-samples": str(DEFAULT_MAX_SAMPLES),
            "query.timeout": format_duration(DEFAULT_QUERY_TIMEOUT_S), "query.max-concurrency": "20",
            "storage.tsdb.path": str(comps.data_dir),
            "storage.tsdb.retention.time": format_duration(comps.config.storage.retention),
            "web.listen-address": comps.config.server.listen,
        }

    def runtimeinfo(self, _: Params) -> Any:
        """Start time, last reload, retention."""
        stats = self.server.stats
        return {"startTime": rfc3339(self.started), "CWD": os.getcwd(),
                "reloadConfigSuccess": stats.last_reload_ok,
                "lastConfigTime": rfc3339(stats.last_reload_success_t), "corruptionCount": 0,
                "goroutineCount": threading.active_count(), "GOMAXPROCS": os.cpu_count() or 1,
                "GOGC": "", "GODEBUG": "",
                "storageRetention": format_duration(self.server.components.config.storage.retention)}

    def tsdb(self, _: Params) -> Any:
        """The head's cardinality: series by name, label pairs, values by label."""
        series = self.server.components.store.series([Matcher(METRIC_NAME_LABEL, MatchOp.RE, ".+")])
        by_name = Counter(ls.name for ls in series)
        pairs = Counter(f"{k}={v}" for ls in series for k, v in ls.items_tuple)
        values_by_label: dict[str, set[str]] = {}
        for ls in series:
            for k, v in ls.items_tuple:
                values_by_label.setdefault(k, set()).add(v)
        return {"headStats": {"numSeries": len(series), "numLabelPairs": len(pairs), "chunkCount": 0,
                              "minTime": 0, "maxTime": 0},
                "seriesCountByMetricName": _top(by_name),
                "labelValueCountByLabelName": _top(Counter({k: len(v) for k, v in values_by_label.items()})),
                "memoryInBytesByLabelName": _top(Counter({k: sum(len(x) for x in v)
                                                          for k, v in values_by_label.items()})),
                "seriesCountByLabelValuePair": _top(pairs)}

    def targets(self, params: Params) -> Any:
        """Active and dropped targets, by ``state`` and ``scrapePool``."""
        state = (params.get("state") or "any").lower()
        pool = params.get("scrapePool") or ""
        scrape = self.server.components.scrape
        active = [{
            "discoveredLabels": dict(h.discovered),
            "labels": dict(h.labels), "scrapePool": h.job, "scrapeUrl": h.url, "globalUrl": h.url,
            "lastError": h.last_error, "lastScrape": rfc3339(h.last_scrape),
            "lastScrapeDuration": h.last_duration, "health": h.health,
            "scrapeInterval": format_duration(h.interval), "scrapeTimeout": format_duration(h.timeout),
        } for h in scrape.targets() if not pool or h.job == pool]
        dropped = [{"discoveredLabels": d} for d in scrape.dropped() if not pool or d.get("job") == pool]
        return {"activeTargets": active if state in ("", "any", "active") else [],
                "droppedTargets": dropped if state in ("", "any", "dropped") else []}

    def _alerts_by_rule(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for a in self.server.components.evaluator.active():
            out.setdefault(a.rule or a.alertname, []).append(_alert(a))
        return out

    def rules(self, params: Params) -> Any:
        """The alerting rules (with their alerts) and the SLOs' recording rules, in groups."""
        comps = self.server.components
        kind = params.get("type")
        active = self._alerts_by_rule()
        last = self.server.stats.last_t
        took = self.server.stats.last_duration
        rules_json = [] if kind == "record" else [
            {**_rule(r, active.get(r.uid, []), last, took, comps.evaluator.band_status(r.name),
                     comps.evaluator.band_warmup(r.name)), **_peers(r, comps.evaluator.peer_status(r.uid))}
            for r in comps.rules]
        group = {"interval": comps.config.server.evaluation_interval, "limit": 0,
                 "evaluationTime": self.server.stats.last_duration, "lastEvaluation": rfc3339(last)}
        recorded: dict[str, list[dict[str, Any]]] = {}  # the SLOs' recording rules, in Sloth's groups
        for rec in [] if kind == "alert" else comps.evaluator.recordings:
            recorded.setdefault(rec.group, []).append(_recording(rec, last, took))
        return {"groups": [{"name": "inferwatch", "file": "inferwatch.yml", "rules": rules_json, **group},
                           *({"name": name, "file": "slo.rules.yml", "rules": items, **group}
                             for name, items in recorded.items())]}

    def alerts(self, _: Params) -> Any:
        """Every pending and firing alert."""
        return {"alerts": [a for group in self._alerts_by_rule().values() for a in group]}


def prom_status_routes(server: Server) -> list[BaseRoute]:
    """``status/*``, ``targets``, ``rules`` and ``alerts`` of ``server`` (``StatusApi``'s routes)."""
    return StatusApi(server).routes()


def _top(c: Counter[str]) -> list[dict[str, Any]]:
    return [{"name": k, "value": n} for k, n in c.most_common(10)]


def _alert(a: Any) -> dict[str, Any]:
    out = {"labels": a.labels.to_dict(), "annotations": dict(a.annotations), "state": str(a.state),
           "activeAt": rfc3339(a.active_since), "value": format_api_float(a.value)}
    if a.held:  # inferwatch's addition to Prometheus's shape, only when it applies
        out["held"] = True
    return out


def _recording(r: Any, last: float | None, took: float) -> dict[str, Any]:
    return {"name": r.record, "query": r.promql, "labels": dict(r.labels), "health": "ok", "lastError": "",
            "evaluationTime": took, "lastEvaluation": rfc3339(last), "type": "recording"}


def _rule(r: Any, alerts: list[dict[str, Any]], last: float | None, took: float,
          bands: dict[str, bool] | None = None,
          warmup: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    state = "firing" if any(a["state"] == "firing" for a in alerts) else ("pending" if alerts else "inactive")
    out = {"state": state, "name": r.name, "query": r.promql, "duration": r.for_,
           "keepFiringFor": r.keep_firing_for, "labels": dict(r.alert_labels),
           "annotations": dict(r.annotations), "alerts": alerts, "health": "ok", "lastError": "",
           "evaluationTime": took, "lastEvaluation": rfc3339(last), "type": "alerting",
           "dynamic": r.dynamic is not None}  # inferwatch's addition: a threshold: dynamic rule
    if r.dynamic is not None:  # and whether each series' band is learned yet
        # and how far each warm-up is (samples and seconds seen against those needed)
        w = warmup or {}
        out["bands"] = [{"series": k, "learned": v, **({"warmup": w[k]} if k in w else {})}
                        for k, v in sorted((bands or {}).items())]
    return out


def _peers(r: Any, status: tuple[float, list[PeerGroup]] | None) -> dict[str, Any]:
    """An outlier rule's groups at its last evaluation (inferwatch's addition, only on outlier rules)."""
    if r.outlier is None:
        return {}
    groups = [] if status is None else status[1]
    member = r.outlier.member
    return {"outlier": {"member": member, "peersBy": list(r.outlier.peers_by), "groups": [{
        "labels": dict(zip(r.outlier.peers_by, g.key, strict=True)), "median": format_api_float(g.median),
        "spread": format_api_float(g.spread), "judged": g.judged,
        "members": [{"member": m.name(member), "labels": m.labels.without_name().to_dict(),
                     "value": format_api_float(m.value), "outlier": m.outlier}
                    for m in sorted(g.members, key=lambda m: m.name(member))]} for g in groups]}}
