"""Alertmanager 0.25's API v2 for alerts: what amtool and Grafana's Alertmanager data source read.

    GET  /api/v2/status           version, config, uptime, the cluster (an HA pair's replicas)
    GET  /api/v2/receivers        the receivers' names
    GET  /api/v2/alerts           filter, active, silenced, inhibited, unprocessed, receiver
    POST /api/v2/alerts           alerts in, as Alertmanager takes them (into the pipeline)
    GET  /api/v2/alerts/groups    the alerts by route and group labels

Shapes as ``api/v2/openapi.yaml``; fingerprints as Alertmanager computes them, so
an alert has the same id here and there. The silence routes are in ``_alerting_api``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

import re2
import yaml
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from inferwatch._exceptions import InputError
from inferwatch.alerting import AlertsHandle, AlertView, parse_rfc3339, rfc3339
from inferwatch.alerting import Route as AlertRoute
from inferwatch.model import (
    Labels,
    Matcher,
    MatchOp,
    alertmanager_fingerprint,
    format_duration,
    is_valid_label_name,
    parse_matcher,
)
from inferwatch.rules import Alert
from inferwatch.store import DEFAULT_LIMITS, SeriesLimits

__all__ = ["AM_API_VERSION", "AlertmanagerApi", "am_error", "am_routes", "parse_postable_alerts"]

AM_API_VERSION = "0.25.0"  # the Alertmanager whose API this answers (amtool compares major.minor)

Write = Callable[[Callable[[Request], Any]], Any]
AlertFilter = Callable[[AlertView], bool]


def am_error(status: int, msg: str) -> JSONResponse:
    """An error as Alertmanager answers it: the message as a JSON string (amtool's client decodes that)."""
    return JSONResponse(msg, status_code=status)


def _bool(request: Request, name: str) -> bool:
    raw = request.query_params.get(name)
    if raw is None:
        return True  # the spec's default
    # Go's strconv.ParseBool, as go-swagger parses the flags
    if raw in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if raw in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise InputError(f"{name} in query must be of type bool: {raw!r}")


def _filter(request: Request) -> list[Matcher]:
    out = []
    for text in request.query_params.getlist("filter"):
        try:
            out.append(parse_matcher(text))
        except ValueError as exc:
            raise InputError(f"filter: {exc}") from None
    return out


def _receiver_regex(request: Request) -> Any:
    raw = request.query_params.get("receiver")
    if raw is None:
        return None
    try:
        return re2.compile(f"^(?:{raw})$")
    except re2.error as exc:
        raise InputError(f"failed to parse receiver param: {exc}") from None


def filter_matches(matchers: list[Matcher], labels: Mapping[str, str]) -> bool:
    """Alertmanager's ``matchFilterLabels``: an empty value matches an absent label only for = and =~."""
    for m in matchers:
        present = m.name in labels
        if m.value == "" and present == (m.op in (MatchOp.NE, MatchOp.NRE)):
            continue
        if not m.matches(labels.get(m.name, "")):
            return False
    return True


def _alert_filter(request: Request) -> AlertFilter:
    matchers = _filter(request)
    active, silenced = _bool(request, "active"), _bool(request, "silenced")
    inhibited = _bool(request, "inhibited")
    _bool(request, "unprocessed")  # accepted and checked; every alert here has been processed

    def keep(v: AlertView) -> bool:
        if (not active and v.state == "active") or (not silenced and v.silenced_by):
            return False
        if not inhibited and v.inhibited_by:
            return False
        return filter_matches(matchers, v.alert.labels)
    return keep


@functools.lru_cache(maxsize=1 << 16)
def _fingerprint(labels: Labels) -> str:
    # pure-Python FNV-1a costs ~0.1 ms; a label set is asked for on every GET of every alert
    return alertmanager_fingerprint(labels.items_tuple)


_time = functools.lru_cache(maxsize=1 << 12)(rfc3339)  # alerts sent together share their times


def alert_json(v: AlertView, receivers: list[str]) -> dict[str, Any]:
    """A gettableAlert."""
    a = v.alert
    out: dict[str, Any] = {
        "annotations": dict(a.annotations), "endsAt": _time(a.ends_at),
        "fingerprint": _fingerprint(a.labels),
        "receivers": [{"name": r} for r in receivers], "startsAt": _time(a.starts_at),
        "status": {"inhibitedBy": sorted(_fingerprint(s.labels) for s in v.inhibited_by),
                   "silencedBy": list(v.silenced_by), "state": v.state},
        "updatedAt": _time(v.updated_at), "labels": a.labels.to_dict(),
    }
    if a.generator_url:
        out["generatorURL"] = a.generator_url
    return out


def alerts_json(views: list[AlertView], keep: AlertFilter, receiver: Any) -> list[dict[str, Any]]:
    """GET /api/v2/alerts: kept alerts sorted by fingerprint."""
    out = [alert_json(v, v.receivers) for v in views
           if (receiver is None or any(receiver.match(r) for r in v.receivers)) and keep(v)]
    return sorted(out, key=lambda a: str(a["fingerprint"]))


def groups_json(views: list[AlertView], keep: AlertFilter, receiver: Any) -> list[dict[str, Any]]:
    """GET /api/v2/alerts/groups: one group per route and group labels, sorted as Alertmanager sorts."""
    groups: dict[tuple[str, Labels], tuple[AlertRoute, list[AlertView]]] = {}
    receivers: dict[int, list[str]] = {}  # by the view's id: an alert in two groups is built once
    built: dict[int, dict[str, Any]] = {}

    def cached(v: AlertView) -> dict[str, Any]:
        if id(v) not in built:
            built[id(v)] = alert_json(v, [])
        return built[id(v)]

    for v in views:
        if not keep(v):
            continue
        for route in v.routes:
            name = route.options.receiver
            if receiver is not None and not receiver.match(name):
                continue
            key = (route.key, route.options.group_labels(v.alert.labels))
            groups.setdefault(key, (route, []))[1].append(v)
            receivers.setdefault(id(v), []).append(name)
    out = []
    for (_, labels), (route, members) in sorted(groups.items(), key=lambda kv: _group_order(kv[0][1],
                                                                                         kv[1][0])):
        members.sort(key=lambda v: _alert_order(v.alert.labels))
        out.append({"alerts": [{**cached(v), "receivers": [{"name": r} for r in receivers[id(v)]]}
                               for v in members],
                    "labels": labels.to_dict(), "receiver": {"name": route.options.receiver}})
    return out


def _label_order(labels: Labels) -> tuple[int, list[tuple[str, str]]]:
    # model.LabelSet.Before: fewer labels first, then the sorted pairs
    return len(labels), list(labels.items_tuple)  # already sorted by name


def _group_order(labels: Labels, route: AlertRoute) -> tuple[Any, ...]:
    return (*_label_order(labels), route.options.receiver)


def _alert_order(labels: Labels) -> tuple[Any, ...]:
    # types.AlertSlice: by job, then instance (alerts without one last), then the label set
    keys = tuple((k not in labels, labels.get(k, "")) for k in ("job", "instance"))
    return (*keys, *_label_order(labels))


def _opt_time(a: Mapping[str, Any], key: str, where: str) -> float | None:
    raw = a.get(key)
    if raw is None:
        return None
    try:
        t = parse_rfc3339(str(raw))
    except ValueError:
        raise InputError(f"{where}.{key}: not an RFC 3339 time: {str(raw)[:64]!r}") from None
    if t is not None and not math.isfinite(t):
        raise InputError(f"{where}.{key}: out of range")
    return t


def _string_map(raw: Any, where: str) -> dict[str, str]:
    if raw is None:
        return {}
    try:
        if type(raw) is dict:  # JSON gives exact types, and object keys are strings already
            "".join(raw.values())  # a TypeError on the first value that is not a string, checked in C
            return raw
    except TypeError:
        pass
    raise InputError(f"{where}: expected an object of strings")


@functools.lru_cache(maxsize=4096)
def _valid_names(names: tuple[str, ...]) -> str | None:
    """The first invalid label name of a storm's few distinct name sets (``None``: all valid)."""
    return next((k for k in names if not is_valid_label_name(k)), None)


def _postable(a: Any, where: str, now: float, limits: SeriesLimits) -> Alert:
    if type(a) is not dict:
        raise InputError(f"{where}: expected an object")
    raw = _string_map(a.get("labels"), f"{where}.labels")
    pairs = tuple(sorted(raw.items() if "" not in raw.values() else ((k, v) for k, v in raw.items() if v)))
    if not pairs:
        raise InputError(f"{where}: at least one label pair required")
    bad = _valid_names(tuple(k for k, _ in pairs))
    if bad is not None:
        raise InputError(f"{where}.labels: invalid label name {bad[:64]!r}")
    labels = Labels.from_sorted(pairs)  # checked above: string names, unique (a JSON object's), sorted
    limits.check_labels(labels, f"{where}.labels")
    starts, ends = _opt_time(a, "startsAt", where), _opt_time(a, "endsAt", where)
    if starts is None:
        starts = ends if ends is not None else now
    if ends is not None and ends < starts:
        raise InputError(f"{where}: start time must be before end time")
    url = a.get("generatorURL", "")
    if not isinstance(url, str):
        raise InputError(f"{where}.generatorURL: expected a string")
    return Alert(labels, dict(_string_map(a.get("annotations"), f"{where}.annotations")), starts, ends,
                 float("nan"), url)


def parse_postable_alerts(
    body: Any, now: float, limits: SeriesLimits = DEFAULT_LIMITS,
) -> tuple[list[Alert], list[str]]:
    """``postableAlerts``: the valid alerts, and one message per invalid one (Alertmanager keeps the rest)."""
    if not isinstance(body, list):
        raise InputError("alerts: expected a JSON list of alerts")
    good, errors = [], []
    for i, a in enumerate(body):
        try:
            good.append(_postable(a, f"alerts[{i}]", now, limits))
        except InputError as exc:
            errors.append(str(exc))
    return good, errors


def _config_yaml(alerts: AlertsHandle) -> str:
    """The routing part of the config in Alertmanager's YAML (``status.config.original``); no secrets."""
    cfg = alerts.config

    def route(r: AlertRoute) -> dict[str, Any]:
        o = r.options
        d: dict[str, Any] = {"receiver": o.receiver, "group_by": list(o.group_by),
                             "group_wait": format_duration(o.group_wait),
                             "group_interval": format_duration(o.group_interval),
                             "repeat_interval": format_duration(o.repeat_interval)}
        if r.matchers:
            d["matchers"] = [str(m) for m in r.matchers]
        if r.continue_:
            d["continue"] = True
        if r.children:
            d["routes"] = [route(c) for c in r.children]
        return d

    doc = {"global": {"resolve_timeout": format_duration(cfg.resolve_timeout)}, "route": route(alerts.root),
           "inhibit_rules": [{"source_matchers": list(r.source_matchers),
                              "target_matchers": list(r.target_matchers),
                              "equal": list(r.equal)} for r in cfg.inhibit_rules],
           "receivers": [{"name": s.name} for s in cfg.effective_receivers()], "templates": []}
    return yaml.safe_dump(doc, sort_keys=False)


def _version_info() -> dict[str, str]:
    import platform

    from inferwatch import __version__

    return {"branch": "inferwatch", "buildDate": "", "buildUser": "inferwatch",
            "goVersion": f"python{platform.python_version()}", "revision": f"inferwatch-{__version__}",
            "version": AM_API_VERSION}


class AlertmanagerApi:
    """Alertmanager v2's status, receivers and alerts: one method an endpoint."""

    def __init__(self, alerts: AlertsHandle, write: Write, json_body: Callable[[Request], Any],
                 limits: SeriesLimits = DEFAULT_LIMITS) -> None:
        self.alerts = alerts
        self.write = write
        self.json_body = json_body
        self.limits = limits
        self.clock = self.alerts.clock
        self.started = self.clock.now()

    def routes(self) -> list[Route]:
        """Every endpoint of this API, registered here and nowhere else."""
        return [
            Route("/api/v2/status", self.status, methods=["GET"]),
            Route("/api/v2/receivers", self.receivers, methods=["GET"]),
            Route("/api/v2/alerts", self._reader(alerts_json), methods=["GET"]),
            Route("/api/v2/alerts", self.write(self.post_alerts), methods=["POST"]),
            Route("/api/v2/alerts/groups", self._reader(groups_json), methods=["GET"]),
        ]

    async def status(self, request: Request) -> Response:
        return JSONResponse({"cluster": self.alerts.cluster(),
                             "config": {"original": _config_yaml(self.alerts)},
                             "uptime": rfc3339(self.started), "versionInfo": _version_info()})

    async def receivers(self, request: Request) -> Response:
        return JSONResponse([{"name": s.name} for s in self.alerts.config.effective_receivers()])

    def _reader(self, build: Callable[[list[AlertView], AlertFilter, Any], list[dict[str, Any]]]) -> Any:
        async def handler(request: Request) -> Response:
            try:
                keep, receiver = _alert_filter(request), _receiver_regex(request)
            except InputError as exc:
                return am_error(400, str(exc))
            # off the event loop: 10,000 alerts take a few hundred ms to match and build
            body = await run_in_threadpool(lambda: build(self.alerts.view(self.clock.now()), keep, receiver))
            return JSONResponse(body)
        return handler

    async def post_alerts(self, request: Request) -> Response:
        now = self.clock.now()
        posted, errors = parse_postable_alerts(await self.json_body(request), now, self.limits)
        if posted:
            await run_in_threadpool(self.alerts.send, posted, now)
        if errors:
            return am_error(400, "; ".join(errors[:20]))
        return Response(status_code=200)


def am_routes(alerts: AlertsHandle, write: Write, json_body: Callable[[Request], Any],
              limits: SeriesLimits = DEFAULT_LIMITS) -> list[Route]:
    """``AlertmanagerApi``'s routes."""
    return AlertmanagerApi(alerts, write, json_body, limits).routes()

