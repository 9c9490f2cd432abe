"""The incident page a notification's signed link opens: one tap from the phone to an acknowledgement.

    GET  /api/v1/alerts/ack/link ?group=&episode=&expires=&sig=            the page (changes nothing:
                                 mail scanners and chat previews open links)
    POST /api/v1/alerts/ack/link ?group=&episode=&expires=&sig=[&do=ack]   acknowledge (by "link")
    POST /api/v1/alerts/ack/link ?...&do=escalate                          send the next step now
    POST /api/v1/alerts/ack/link ?...&do=silence   (body for=1h|4h|24h)    silence the group's alerts

The link is the credential for its one episode (``LinkSigner``: bound to the group, the episode and
an expiry; refused once the group resolved). The page's buttons post claims signed again for their
own purpose (``ack``, ``escalate``, ``silence``), so each does only what it says and all end with
the link. The path is open in the access gate; a post from another site's page is refused here
(``Origin``), and the page sends its address to no other site, is never cached and allows no script.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from inferwatch._exceptions import InputError
from inferwatch.alerting import LINK_ACTIONS, AcksHandle, Silence, SilencesHandle, group_id
from inferwatch.model import Matcher, MatchOp, parse_duration
from inferwatch.promql import Engine
from inferwatch.server._runtime import Server
from inferwatch.server.access import ACK_LINK_PATH, same_origin
from inferwatch.server.web._incident_page import (
    SILENCE_FOR,
    Incident,
    Plot,
    Told,
    incident_html,
    message_html,
)
from inferwatch.server.web._incident_words import PageWords

__all__ = ["incident_routes"]

_CLAIMS = ("group", "episode", "expires", "sig")
_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'",
    # the URL is a credential: never sent to another site ("no-referrer" would make the form posts
    # send "Origin: null", which the origin check must refuse)
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
    "X-Robots-Tag": "noindex",
    "X-Content-Type-Options": "nosniff",
}
GRAPH_S, GRAPH_STEP_S, GRAPH_SERIES = 3600.0, 60.0, 5
MAX_BODY = 1024


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers=_HEADERS)


def _claims(request: Request) -> dict[str, str]:
    return {k: request.query_params.get(k, "") for k in _CLAIMS}


def _plot(server: Server, alertname: str, labels: Mapping[str, str], now: float) -> Plot | None:
    rule = next((r for r in server.components.rules if r.name == alertname), None)
    if rule is None:
        return None
    query = str(rule.signal)
    try:
        res = Engine(server.components.store).range(query, now - GRAPH_S, now, GRAPH_STEP_S)
    except Exception:  # the page without its graph rather than no page
        return Plot(query)
    mine = [pts for ls, pts in res.series
            if all(labels.get(k) == v for k, v in ls.to_dict().items() if k != "__name__")]
    return Plot(query, mine[:GRAPH_SERIES], rule.threshold)


def _alert(a: Any) -> dict[str, object]:
    ann = a.annotations
    value = a.value if isinstance(a.value, float) and math.isfinite(a.value) else None
    return {"labels": a.labels.to_dict(), "summary": ann.get("summary", ""), "value": value,
            "runbook": ann.get("runbook") or ann.get("runbook_url") or ann.get("next_step") or ""}


def _told(acks: AcksHandle, gid: str, since: float) -> list[Told]:
    out = []
    for e in acks.history.query(kinds=("notified",), group_id=gid, start=since, limit=50):
        d = e.detail
        step = d.get("step")
        out.append(Told(e.t, str(d.get("receiver", "?")), str(d.get("outcome", "?")),
                        int(step) if isinstance(step, int | float) and step else None))
    return out


def page_words(server: Server, request: Request) -> PageWords:
    """The page's language: ``alerting.language`` where the config names one, else the browser's
    (``Accept-Language``, as the dashboard falls back to it); its times in ``alerting.timezone``."""
    alerting = server.components.config.alerting
    language = alerting.language
    if "language" not in alerting.model_fields_set:
        first = request.headers.get("accept-language", "").split(",")[0].strip().lower()
        language = "zh-CN" if first.startswith("zh") else "en"
    return PageWords.of(language, alerting.timezone)


def build_incident(server: Server, acks: AcksHandle, gid: str, params: Mapping[str, str], now: float,
                   source: str, words: PageWords) -> Incident | None:
    """The page's content for group ``gid`` (``None``: the group is gone)."""
    g = next((g for g in acks.groups(now) if group_id(g.key) == gid), None)
    state = next((s for s in acks.group_states(now) if s["group_id"] == gid), None)
    if g is None or state is None:
        return None
    firing = g.firing()
    shown = firing or g.alerts
    names = sorted({a.labels.to_dict().get("alertname", "") for a in shown})
    tiers = {a.labels.to_dict().get("tier", "") for a in shown}
    since = min((a.starts_at for a in firing), default=None)
    ack, esc = state.get("ack"), state.get("escalation")
    escalation = (str(esc["policy"]), int(esc["step"])) if isinstance(esc, dict) else None
    started = esc["started"] if isinstance(esc, dict) else (since if since is not None else now - GRAPH_S)
    labels = {**g.common_labels().to_dict(), **g.labels.to_dict()}
    return Incident(
        gid, ", ".join(names), min(tiers) if len(tiers) == 1 else "", since, now,
        [_alert(a) for a in shown], acked_by=str(ack["by"]) if isinstance(ack, dict) else "",
        escalation=escalation, told=_told(acks, gid, float(started) - 1.0),
        plot=_plot(server, names[0], labels, now) if names else None,
        forms={p: acks.link_for(params, p, now, source) for p in LINK_ACTIONS}, words=words)


def _silence(silences: SilencesHandle, acks: AcksHandle, gid: str, form: Mapping[str, list[str]],
             now: float, w: PageWords) -> str:
    length = (form.get("for") or ["1h"])[0]
    if length not in SILENCE_FOR:
        raise InputError(f"silence for: one of {', '.join(SILENCE_FOR)}, got {length[:16]!r}")
    g = next(g for g in acks.groups(now) if group_id(g.key) == gid)
    labels = {**g.common_labels().to_dict(), **g.labels.to_dict()}
    ms = [Matcher(k, MatchOp.EQ, v) for k, v in sorted(labels.items())]
    s = silences.set(Silence.new(ms, now, now + parse_duration(length), "incident link",
                                 f"resolved by silence from the incident page (group {gid})"), now)
    return w("done_silence", d=w.silence(length), id=s.id[:8])


def incident_routes(server: Server, acks: AcksHandle, silences: SilencesHandle) -> list[BaseRoute]:
    """The incident page and its three buttons, at the acknowledgement link's path."""
    clock = acks.clock

    def run(do: str, gid: str, form: Mapping[str, list[str]], now: float, w: PageWords) -> tuple[str, int]:
        try:
            if do == "escalate":
                step = acks.escalate(gid, now, "escalated now from the incident page")
                return (w("done_escalate", n=step), 200) if step else (w("nothing_to_escalate"), 409)
            if do == "silence":
                return _silence(silences, acks, gid, form, now, w), 200
            acks.acknowledge(now, "link", "one-click link", gid=gid, tell=True)
        except InputError as exc:
            return w("not_done", why=w.why(str(exc))), 409
        return w("done_ack"), 200

    async def page(request: Request) -> Response:
        return await answer(request, "ack", None)

    async def act(request: Request) -> Response:
        if not same_origin({k.lower(): v for k, v in request.headers.items()}):
            w = page_words(server, request)
            return _html(message_html(w("other_site"), words=w), 403)
        do = request.query_params.get("do", "ack")
        form = parse_qs((await request.body())[:MAX_BODY].decode("utf-8", "replace"))
        return await answer(request, do, form)

    async def answer(request: Request, do: str, form: Mapping[str, list[str]] | None) -> Response:
        params, now, w = _claims(request), clock.now(), page_words(server, request)
        try:
            gid = acks.link_group(params, now, do if do in LINK_ACTIONS else "")
        except InputError as exc:
            return _html(message_html(w.refusal(str(exc)), words=w), 403)
        message, status = ("", 200) if form is None else await run_in_threadpool(run, do, gid, form, now, w)
        incident = await run_in_threadpool(build_incident, server, acks, gid, params, clock.now(), do, w)
        if incident is None:
            return _html(message_html(message or w("gone"), words=w), status)
        return _html(incident_html(incident, message), status)

    return [Route(ACK_LINK_PATH, page, methods=["GET"]), Route(ACK_LINK_PATH, act, methods=["POST"])]
