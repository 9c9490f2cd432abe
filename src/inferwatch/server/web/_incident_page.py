"""The incident page's HTML: one alert group, readable on a phone, with no script.

What fires and since when, the last hour's graph (an inline SVG drawn here, so the page needs
no query API and no token), the runbook line, who was told, and one form per action. Every
value is escaped; numbers are shown as Prometheus's ``humanize`` writes them; words, times and
durations as ``PageWords`` says them (``alerting.language`` and ``alerting.timezone``).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

from inferwatch.rules import humanize
from inferwatch.server.web._incident_words import PageWords

__all__ = ["Incident", "Plot", "Told", "incident_html", "message_html"]

W, H, PAD = 320.0, 120.0, 4.0  # the graph's box (CSS scales it to the card's width)
SILENCE_FOR = ("1h", "4h", "24h")  # Resolve by silence: how long, one button each


@dataclass(frozen=True)
class Plot:
    """The last hour of the alert's signal: series of ``(t, value)`` and the rule's threshold."""

    query: str
    series: Sequence[Sequence[tuple[float, float]]] = ()
    threshold: float | None = None


@dataclass(frozen=True)
class Told:
    """One notification of the group: when, to which receiver, its outcome and escalation step."""

    t: float
    receiver: str
    outcome: str
    step: int | None = None


@dataclass(frozen=True)
class Incident:
    """What the page shows of one group (built by the route from the pipeline and the store)."""

    group: str
    title: str
    tier: str
    firing_since: float | None
    now: float
    alerts: Sequence[Mapping[str, object]]  # labels, summary, value, runbook
    acked_by: str = ""
    escalation: tuple[str, int] | None = None  # (policy, step sent)
    told: Sequence[Told] = ()
    plot: Plot | None = None
    forms: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # action -> signed params
    words: PageWords = field(default_factory=lambda: PageWords.of("en"))


def _say(w: PageWords, key: str, data: Mapping[str, str] | None = None, **values: object) -> str:
    """The phrase ``key`` as HTML: its words escaped, each of ``data`` (names, ids: what the server
    holds, not words of the page) in a ``data-raw`` span, as the dashboard marks data."""
    marks = {k: f"\x00{k}\x00" for k in data or {}}
    out = html.escape(w(key, **values, **marks))
    for k, v in (data or {}).items():
        out = out.replace(f"\x00{k}\x00", f"<span data-raw>{html.escape(v)}</span>")
    return out


def _page(title: str, body: str, words: PageWords) -> str:
    return (f"<!doctype html><html lang='{words.language}'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{html.escape(title)} · inferwatch</title><style>{_CSS}</style></head>"
            f"<body><main>{body}</main></body></html>")


def message_html(message: str, back: str = "", words: PageWords | None = None) -> str:
    """A page with one sentence (a refused link, a finished action) and a way back to the incident."""
    w = words or PageWords.of("en")
    link = f"<p><a href='?{html.escape(back)}'>{html.escape(w('back'))}</a></p>" if back else ""
    return _page("inferwatch", f"<p id='msg' role='status'>{html.escape(message)}</p>{link}", w)


def _svg(plot: Plot, w: PageWords) -> str:
    pts = [(t, v) for s in plot.series for t, v in s if math.isfinite(v)]
    if not pts:
        query = f"<code>{html.escape(plot.query)}</code>"
        no_data = html.escape(w("no_data", q="\x00")).replace("\x00", query)
        return f"<p class='muted' id='graph'>{no_data}</p>"
    ts, vs = [t for t, _ in pts], [v for _, v in pts]
    if plot.threshold is not None and math.isfinite(plot.threshold):
        vs.append(plot.threshold)
    t0, t1, lo, hi = min(ts), max(ts), min(vs), max(vs)
    span_t, span_v = (t1 - t0) or 1.0, (hi - lo) or 1.0

    def xy(t: float, v: float) -> str:
        x, y = PAD + (t - t0) / span_t * (W - 2 * PAD), H - PAD - (v - lo) / span_v * (H - 2 * PAD)
        return f"{x:.1f},{y:.1f}"

    lines = "".join(f"<polyline points='{' '.join(xy(t, v) for t, v in s if math.isfinite(v))}'/>"
                    for s in plot.series)
    limit = ""
    if plot.threshold is not None and math.isfinite(plot.threshold):
        y = xy(t0, plot.threshold).split(",")[1]
        limit = f"<line class='limit' x1='0' x2='{W:g}' y1='{y}' y2='{y}'/>"
    label = (w("graph", lo=humanize(lo), hi=humanize(hi))
             + (w("threshold", v=humanize(plot.threshold)) if plot.threshold is not None else ""))
    return (f"<figure id='graph'><svg viewBox='0 0 {W:g} {H:g}' role='img' aria-label='{html.escape(label)}'>"
            f"{limit}{lines}</svg><figcaption>{html.escape(label)} · <code>{html.escape(plot.query)}"
            "</code></figcaption></figure>")


def _alert(a: Mapping[str, object], w: PageWords) -> str:
    labels = a.get("labels") or {}
    assert isinstance(labels, Mapping)
    folded = "".join(f"<li data-raw>{html.escape(str(k))}=<b>{html.escape(str(v))}</b></li>"
                     for k, v in labels.items())
    value = a.get("value")
    shown = (f"<p>{html.escape(w('value'))} <b class='value'>{html.escape(humanize(value))}</b></p>"
             if isinstance(value, float) else "")
    summary = w.summary(str(a.get("summary") or "")) or str(labels.get("alertname", ""))
    return (f"<li class='alert'><p class='summary'>{html.escape(summary)}</p>{shown}<details><summary>"
            f"{html.escape(w('labels'))}</summary><ul class='labels'>{folded}</ul></details></li>")


def _form(action: str, params: Mapping[str, str], label: str, extra: str = "") -> str:
    query = html.escape(urlencode({**params, "do": action}))
    button = extra or f'<button type="submit" id="{action}">{label}</button>'
    return f"<form method='post' action='?{query}'>{button}</form>"


def _actions(forms: Mapping[str, Mapping[str, str]], w: PageWords) -> str:
    out = []
    if "ack" in forms:  # (already acknowledged: the page says by whom instead)
        out.append(_form("ack", forms["ack"], html.escape(w("ack"))))
    if "escalate" in forms:
        out.append(_form("escalate", forms["escalate"], html.escape(w("escalate"))))
    if "silence" in forms:
        buttons = "".join(f"<button type=submit name='for' value='{d}' id='silence-{d}'>"
                          f"{html.escape(w('silence', d=w.silence(d)))}</button>" for d in SILENCE_FOR)
        legend = f"<legend>{html.escape(w('silence_legend'))}</legend>"
        out.append(_form("silence", forms["silence"], "", f"<fieldset>{legend}{buttons}</fieldset>"))
    return f"<section class='actions'>{''.join(out)}</section>"


def _told(told: Sequence[Told], w: PageWords) -> str:
    if not told:
        return f"<p class='muted'>{html.escape(w('nobody'))}</p>"
    lines = (_say(w, "told", {"receiver": x.receiver}, t=w.clock(x.t), outcome=w.outcome(x.outcome),
                  step=w("told_step", n=x.step) if x.step else "") for x in told)
    return "<ul id='told'>" + "".join(f"<li>{line}</li>" for line in lines) + "</ul>"


def incident_html(i: Incident, message: str = "") -> str:
    """The page for one firing group (``message``: what the last button did)."""
    w = i.words
    since = (w("since", t=w.time(i.firing_since), d=w.duration(max(i.now - i.firing_since, 0.0)))
             if i.firing_since is not None else w("resolved"))
    runbook = next((str(a["runbook"]) for a in i.alerts if a.get("runbook")), "")
    data = {"g": i.group, "zone": w.zone_name(i.now)}  # the footer's group id and zone name
    parts = [
        f"<p id='msg' role='status'>{html.escape(message)}</p>" if message else "",
        f"<h1><span class='tier tier-{html.escape(i.tier or 'other')}'>{html.escape(i.tier or '-')}</span> "
        f"{html.escape(i.title)}</h1>",
        f"<p id='since'>{html.escape(since)}</p>",
        f"<p id='acked' class='ok'>{_say(w, 'acked', {'who': i.acked_by})}</p>" if i.acked_by else "",
        _actions({k: v for k, v in i.forms.items() if not (k == "ack" and i.acked_by)}, w),
        f"<ul class='alerts'>{''.join(_alert(a, w) for a in i.alerts)}</ul>",
        # the rule's own instructions (commands, paths) are data: shown as written
        f"<p id='runbook'><b>{html.escape(w('runbook'))}</b> <span data-raw>{html.escape(runbook)}</span></p>"
        if runbook else "",
        _svg(i.plot, w) if i.plot is not None else "",
        f"<h2>{html.escape(w('told_head'))}</h2>",
        f"<p id='escalation'>{_say(w, 'escalation', {'policy': i.escalation[0]}, step=i.escalation[1])}</p>"
        if i.escalation else "",
        _told(i.told, w),
        f"<p class='muted' id='footer'>{_say(w, 'footer', data, t=w.time(i.now))}</p>",
    ]
    return _page(i.title, "".join(parts), w)


_CSS = """
:root{color-scheme:light dark;--fg:#111;--bg:#fff;--muted:#555;--line:#ccc;--accent:#0b57d0;
--bad:#b3261e;--ok:#146c2e}
@media (prefers-color-scheme:dark){:root{--fg:#eee;--bg:#121212;--muted:#bbb;--line:#444;
--accent:#8ab4f8;--bad:#f2b8b5;--ok:#6dd58c}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.45 system-ui,-apple-system,"Segoe UI",
Roboto,"PingFang SC","Hiragino Sans GB","Microsoft YaHei","Noto Sans CJK SC","Noto Sans SC",sans-serif}
main{max-width:40rem;margin:0 auto;padding:12px;overflow-wrap:anywhere}
h1{font-size:1.3rem;margin:.2em 0}
h2{font-size:1.05rem;margin:1em 0 .3em}
.tier{display:inline-block;padding:0 .4em;border-radius:4px;border:2px solid var(--bad);color:var(--bad)}
.tier-P1,.tier-P2{border-color:var(--muted);color:var(--fg)}
.muted,figcaption{color:var(--muted);font-size:.9rem}
.ok{color:var(--ok);font-weight:600}
.actions{display:flex;flex-direction:column;gap:8px;margin:12px 0}
form{margin:0}
fieldset{border:1px solid var(--line);border-radius:8px;display:flex;gap:8px;flex-wrap:wrap;margin:0}
button{min-height:48px;width:100%;font:inherit;font-weight:600;border-radius:8px;
border:2px solid var(--accent);background:var(--bg);color:var(--accent);cursor:pointer}
#ack{background:var(--accent);color:var(--bg)}
fieldset button{flex:1 1 5rem;width:auto}
.alerts,.labels,#told{padding-left:1.1em}
.alert p{margin:.2em 0}
svg{width:100%;height:auto;border:1px solid var(--line);border-radius:6px}
polyline{fill:none;stroke:var(--accent);stroke-width:1.5}
.limit{stroke:var(--bad);stroke-dasharray:4 3}
figure{margin:12px 0}
code{overflow-wrap:anywhere}
#msg{font-weight:600}
a{color:var(--accent)}
"""
