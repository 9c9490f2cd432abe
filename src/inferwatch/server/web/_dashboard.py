"""The web dashboard at ``/``: static pages, and the few JSON views they need beyond the APIs.

    GET /                                   the dashboard (one page, hash routes), its styles inline and
                                            what the overview's first queries need (server time,
                                            services, rules) in a JSON block: no round trip before them
    GET /dashboard/{version}/{file}         its scripts and the vendored uPlot, cached for good (the
                                            version is a hash of the files: a new release, a new URL);
                                            read once at start, answered from memory
    GET /dashboard/{file}                   the same files, revalidated on every use (ETag)
    GET /api/v1/dashboard/alerts            active alerts with why each is muted (silence, inhibition, held)
                                            and the unit of each value (``value_unit`` of its rule)
    GET /api/v1/dashboard/devices           edge devices: last contact, silence, samples, backlog, drops
    GET /api/v1/dashboard/timeline?since=S  alert state changes, notifications and actions since ``now - S``
    GET /api/v1/dashboard/digests           what the next digest of each digest receiver would say
    GET /api/v1/dashboard/diagnose/gpu      the GPU playbook on the stored series (``service``, ``since``)
    GET /api/v1/dashboard/drift             the last drift window per model (KS, JS, histograms), when known

Every chart is a query against ``/api/v1/query_range``; these views only add what
PromQL cannot say (mute state, records, the playbook). Writes go through the
alerting API's silence and acknowledgement endpoints, with a token in an ``Authorization``
header (which a cross-site page cannot set) or, signed in at ``/login``, the session cookie
and its CSRF token in ``X-CSRF-Token`` (the access gate checks both and the origin). The
page's content security policy allows only its own scripts: its files, and
early.js inline by its sha256 (it sends the overview's queries while the files load).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import mimetypes
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from inferwatch.config import Secret
from inferwatch.model import matches_all, parse_duration, shown
from inferwatch.rules import Rule, format_go_float, value_unit
from inferwatch.server._reader import may
from inferwatch.server._runtime import Server
from inferwatch.server._trace_links import trace_notes

if TYPE_CHECKING:  # the server's package imports this module: keep alerting out of that import
    from inferwatch.alerting import AlertsHandle

__all__ = ["STATIC_DIR", "DriftReports", "dashboard_routes"]

log = logging.getLogger(__name__)
STATIC_DIR = Path(__file__).with_name("dashboard")
_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                               "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; "
                               "form-action 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
_FOREVER = "public, max-age=31536000, immutable"
_STYLES = ("vendor/uPlot.min.css", "dashboard.css")  # inlined into the page: nothing blocks its first paint
TIMELINE_MAX_S = 7 * 86400.0

DriftReports = Callable[[], list[dict[str, Any]]]
"""The last closed drift window of each in-process drift aggregator: ``service``, ``model``,
``start``, ``rows`` and ``features`` (each as ``FeatureDrift.to_json()``)."""


def _json(fn: Callable[[Request], Any]) -> Callable[[Request], Any]:
    async def run(req: Request) -> Response:
        try:
            return JSONResponse({"status": "success", "data": await run_in_threadpool(fn, req)})
        except ValueError as exc:
            return JSONResponse({"status": "error", "errorType": "bad_data", "error": str(exc)},
                                status_code=400)
        except Exception:
            log.exception("%s failed", req.url.path)
            return JSONResponse({"status": "error", "errorType": "internal", "error": "internal error"},
                                status_code=500)
    return run


def _since(req: Request, default: str) -> float:
    raw = req.query_params.get("since", default)
    try:
        since = parse_duration(raw)
    except ValueError:
        raise ValueError(f"invalid parameter 'since': cannot parse {shown(raw)} to a duration") from None
    if not 0 < since <= TIMELINE_MAX_S:
        raise ValueError(f"invalid parameter 'since': {shown(raw)} is not within (0, 7d]")
    return since


def alerts_view(server: Server, alerting: AlertsHandle | None) -> list[dict[str, Any]]:
    """Pending and firing alerts with their rule's PromQL and why each is muted, if it is."""
    now = server.clock.now()
    queries = {r.name: r.promql for r in server.components.rules}
    silences = alerting.silences() if alerting is not None else []
    out = []
    rules = {r.name: r for r in server.components.rules}
    acked = alerting.acked(now) if alerting is not None else {}
    for a in server.components.evaluator.active():
        labels = a.labels.to_dict()
        silenced = [s.id for s in silences if s.mutes(labels, now)]
        annotations = _with_traces(server, rules.get(a.alertname), a.annotations, labels, now)
        out.append({
            "labels": labels, "annotations": annotations, "state": str(a.state),
            "activeAt": a.active_since, "value": format_go_float(a.value), "held": a.held,
            "query": queries.get(a.alertname, ""), "silencedBy": silenced,
            "unit": value_unit(rule.annotations) if (rule := rules.get(a.alertname)) else "",
            "inhibited": alerting is not None and alerting.inhibited(labels, now),
            "response": response_of(alerting, labels),
            "acknowledgedBy": sorted({k.by for k in acked.get(a.labels.fingerprint(), [])}),
            "annotations_zh": _zh(annotations),
        })
    return out


def _zh(annotations: Mapping[str, str]) -> dict[str, str]:
    """The default pack's summary and description in Chinese (translated at the source: the page shows
    them in place of the English; one's own rule's texts are left out and show as written)."""
    from inferwatch.alerting import translate_description, translate_summary

    out = {"summary": translate_summary(annotations.get("summary", ""), "zh-CN"),
           "description": translate_description(annotations.get("description", ""), "zh-CN")}
    return {k: v for k, v in out.items() if v and v != annotations.get(k)}


def response_of(alerting: AlertsHandle | None, labels: dict[str, str]) -> str:
    """What the pipeline does for an alert: its matching actions, then the receivers its routes name.

    The card's "next step" says this rather than the tier's generic response, so a P1
    alert that no action matches does not promise the degrade action. A receiver
    without credentials says it only prints.
    """
    if alerting is None:
        return ""
    acts = [f"{a.name} action" for a in alerting.actions if matches_all(a.matchers, labels)]
    names = dict.fromkeys(r.options.receiver for r in alerting.root.match(labels))
    return " + ".join([*acts, *(_message_to(alerting, n) for n in names)])


def _message_to(alerting: AlertsHandle, receiver: str) -> str:
    status = alerting.delivered_as(receiver)
    return f"{receiver} message" if status == "sent" else f"{receiver} message, {status}"


def _with_traces(server: Server, rule: Rule | None, annotations: Mapping[str, str], labels: dict[str, str],
                 now: float) -> dict[str, str]:
    """The alert's annotations plus its example slow traces (pending ones too: the card shows them)."""
    out = dict(annotations)
    if rule is not None and "example_traces" not in out:
        try:
            out.update(trace_notes(rule, labels, server.components.scrape.exemplars, now,
                                   base_url=server.base_url))
        except Exception:  # the card without traces rather than no card
            log.debug("example traces not read for %s", rule.name, exc_info=True)
    return out


def timeline_view(alerting: AlertsHandle | None, now: float, since: float,
                  links: bool = False) -> list[dict[str, Any]]:
    """Alert starts and ends, notifications and actions after ``now - since``, oldest first
    (``links``: with the acknowledgement links, for a reader holding the token)."""
    from inferwatch.alerting import redact_ack_links

    if alerting is None:
        return []
    start = now - since
    events: list[dict[str, Any]] = []
    for a in alerting.alerts():
        base = {"alertname": a.name, "labels": a.labels.to_dict()}
        if a.starts_at >= start:
            events.append({"t": a.starts_at, "kind": "firing", **base})
        if a.ends_at is not None and start <= a.ends_at <= now:
            events.append({"t": a.ends_at, "kind": "resolved", **base})
    # A notification's own kind (firing, resolved, digest...) is kept as "type".
    events += [{**r.to_json(), "kind": "notification", "type": r.kind,
                **({} if links else {"notes": redact_ack_links(r.notes)})}
               for r in alerting.notifications() if r.t >= start]
    events += [{**r.to_json(), "kind": "action"} for r in alerting.action_records() if r.t >= start]
    return sorted(events, key=lambda e: float(e["t"]))


def digests_view(alerting: AlertsHandle | None, now: float) -> list[dict[str, Any]]:
    """Each digest receiver: when it is due, how many alerts it holds and its text so far."""
    return alerting.digests(now) if alerting is not None else []


def diagnose_view(server: Server, req: Request) -> dict[str, Any]:
    """The GPU playbook over the server's store (no live NVML, no commands run)."""
    from inferwatch.diagnose import diagnose_gpu

    diagnosis = diagnose_gpu(server.components.store, now=server.clock.now(), since=_since(req, "30m"),
                             service=req.query_params.get("service") or None)
    out: dict[str, Any] = _finite(diagnosis.to_json())
    return out


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: such numbers become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


class StaticFromMemory:
    """The page's files, read once and answered from memory on the event loop: no thread hop per
    file (each one waited for the GIL behind the overview's queries), ETag and 304, a
    ``Cache-Control`` of its own. Only files that exist under STATIC_DIR at start are served."""

    def __init__(self, files: dict[str, tuple[bytes, str, str]], cache_control: str) -> None:
        self.files = files
        self.cache_control = cache_control

    async def serve(self, req: Request) -> Response:
        """GET (or HEAD) ``/dashboard/[{version}/]{path}``."""
        found = self.files.get(req.path_params["path"])
        if found is None:
            return Response("Not Found", status_code=404, media_type="text/plain")
        body, media_type, etag = found
        headers = {"ETag": etag, "Cache-Control": self.cache_control}
        if etag in req.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        return Response(body if req.method == "GET" else b"", media_type=media_type,
                        headers={**headers, "Content-Length": str(len(body))})


def read_static() -> dict[str, tuple[bytes, str, str]]:
    """Every file under STATIC_DIR: relative path -> (bytes, media type, ETag)."""
    out = {}
    for path in sorted(p for p in STATIC_DIR.rglob("*") if p.is_file()):
        body = path.read_bytes()
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if path.suffix == ".js":  # the platform's table may lack it or call it text/plain
            media_type = "text/javascript"
        out[path.relative_to(STATIC_DIR).as_posix()] = (
            body, media_type, '"' + hashlib.sha256(body).hexdigest()[:20] + '"')
    return out


def static_version(files: dict[str, tuple[bytes, str, str]]) -> str:
    """A hash of the page's files: the versioned URL prefix under which they are cached for good."""
    digest = hashlib.sha256()
    for name, (body, _, _) in sorted(files.items()):
        digest.update(name.encode() + b"\0" + body)
    return "v" + digest.hexdigest()[:12]


class Page:
    """index.html as served: styles inline, script URLs under ``dashboard/{version}/``, and early.js
    inline after the per-request #boot block and #overview-spec (overview.json), its hash allowed by
    the content security policy."""

    def __init__(self, version: str) -> None:
        css = "\n".join((STATIC_DIR / name).read_text() for name in _STYLES)
        page = (STATIC_DIR / "index.html").read_text()
        links = "".join(f'<link rel="stylesheet" href="dashboard/{name}">\n' for name in _STYLES)
        if links not in page:
            raise ValueError("index.html does not link its styles as expected")
        page = page.replace(links, f"<style>\n{css}</style>\n")
        early = (STATIC_DIR / "js" / "early.js").read_text()
        spec = json.dumps(json.loads((STATIC_DIR / "overview.json").read_text()), separators=(",", ":"))
        self.before, tag, after = page.partition('<script src="dashboard/js/early.js"></script>\n')
        if not tag:
            raise ValueError("index.html does not load dashboard/js/early.js")
        self.after = (_data_block("overview-spec", spec) + f"<script>{early}</script>\n"
                      + after).replace('="dashboard/', f'="dashboard/{version}/')
        self.before = self.before.replace('="dashboard/', f'="dashboard/{version}/')
        digest = base64.b64encode(hashlib.sha256(early.encode()).digest()).decode()
        self.headers = {**_HEADERS, "Cache-Control": "no-store", "Content-Security-Policy":
                        _HEADERS["Content-Security-Policy"].replace(
                            "script-src 'self'", f"script-src 'self' 'sha256-{digest}'")}

    def render(self, boot: dict[str, Any] | None) -> str:
        """The page with ``boot`` (None: without it; the page then asks for itself)."""
        block = "" if boot is None else _data_block("boot", json.dumps(_finite(boot), separators=(",", ":")))
        return self.before + block + self.after


def boot_view(server: Server) -> dict[str, Any]:
    """What the overview asks before its first query: the server's time, the services, the rules, the
    engine packs selected, and the shortest scrape interval of its targets; and for every page the zone
    its times are shown in (``alerting.timezone``) and the language the config names (``null``: the
    browser's)."""
    comps = server.components
    intervals = [t.effective_interval for t in comps.config.scrape.targets]
    alerting = comps.config.alerting
    return {"now": server.clock.now(), "services": comps.store.label_values("service"),
            "timezone": alerting.timezone,
            "language": alerting.language if "language" in alerting.model_fields_set else None,
            "rules": [{"name": r.name, "query": r.promql, "labels": dict(r.alert_labels)}
                      for r in comps.rules],
            # the overview shows a section per selected engine pack
            "packs": list(comps.config.rules.packs),
            # the charts' step and rate window follow it (Grafana's $__rate_interval)
            "scrape_interval": min(intervals, default=15.0)}


def _data_block(name: str, text: str) -> str:
    """JSON ``text`` as a data block (not run: the content security policy needs no exception)."""
    safe = text.replace("<", "\\u003c")  # no "</script>" inside; JSON reads it back as "<"
    return f'<script type="application/json" id="{name}">{safe}</script>\n'


Devices = Callable[[], list[dict[str, Any]]]
"""What the edge ingest knows of each device (``vars`` of its ``DeviceStatus``)."""


def devices_view(devices: Devices | None, now: float) -> list[dict[str, Any]]:
    """Each edge device with its silence (seconds since its last contact), by name."""
    rows = devices() if devices is not None else []
    out = [{**d, "silence_s": max(0.0, now - float(d.get("last_contact") or 0.0))} for d in rows]
    return sorted(out, key=lambda d: str(d.get("device", "")))


def dashboard_routes(server: Server, alerting: AlertsHandle | None,
                     drift: DriftReports | None = None, devices: Devices | None = None,
                     token: Secret | None = None) -> list[BaseRoute]:
    """The dashboard's routes, mounted beside the APIs by ``inferwatch serve`` and the demo
    (``alerting``: the alerting pipeline's ``AlertsHandle``, ``None`` without one; ``token``:
    the server's token, whose holders see acknowledgement links in the timeline)."""
    files = read_static()
    version = static_version(files)
    page = Page(version)

    async def index(_: Request) -> Response:
        try:
            boot = await run_in_threadpool(boot_view, server)
        except Exception:  # the page asks for itself what it cannot be given
            log.exception("the dashboard's boot data failed")
            boot = None
        return HTMLResponse(page.render(boot), headers=page.headers)

    return [
        Route("/", index),
        Route(f"/dashboard/{version}/{{path:path}}", StaticFromMemory(files, _FOREVER).serve),
        Route("/dashboard/{path:path}", StaticFromMemory(files, "no-cache").serve),
        Route("/api/v1/dashboard/alerts", _json(lambda _: alerts_view(server, alerting))),
        Route("/api/v1/dashboard/timeline", _json(
            lambda r: timeline_view(alerting, server.clock.now(), _since(r, "24h"),
                                    may(r, "responder", token)))),
        Route("/api/v1/dashboard/digests", _json(lambda _: digests_view(alerting, server.clock.now()))),
        Route("/api/v1/dashboard/diagnose/gpu", _json(lambda r: diagnose_view(server, r))),
        Route("/api/v1/dashboard/drift", _json(lambda _: _finite(drift() if drift is not None else []))),
        Route("/api/v1/dashboard/devices", _json(lambda _: devices_view(devices, server.clock.now()))),
    ]
