"""The incident page's HTML: one alert group, readable on a phone, with no script.

What fires and since when, the last hour's graph (an inline SVG drawn here, so the page needs
no query API and no token), the runbook line, who was told, and one form per action. Every
value is escaped; numbers are shown as Prometheus's ``humanize`` writes them.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlencode

from inferwatch.rules import humanize, humanize_duration

__all__ = ["Incident", "Plot", "incident_html", "message_html"]

W, H, PAD = 320.0, 120.0, 4.0  # the graph's box (CSS scales it to the card's width)
SILENCE_FOR = ("1h", "4h", "24h")  # Resolve by silence: how long, one button each


@dataclass(frozen=True)
class Plot:
    """The last hour of the alert's signal: series of ``(t, value)`` and the rule's threshold."""

    query: str
    series: Sequence[Sequence[tuple[float, float]]] = ()
    threshold: float | None = None


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
    escalation: str = ""  # "p0: step 1 sent"
    told: Sequence[str] = ()  # "04:12 first (sent)"
    plot: Plot | None = None
    forms: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # action -> signed params


def _t(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _page(title: str, body: str) -> str:
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{html.escape(title)} · inferwatch</title><style>{_CSS}</style></head>"
            f"<body><main>{body}</main></body></html>")


def message_html(message: str, back: str = "") -> str:
    """A page with one sentence (a refused link, a finished action) and a way back to the incident."""
    link = f"<p><a href='?{html.escape(back)}'>Back to the incident</a></p>" if back else ""
    return _page("inferwatch", f"<p id='msg' role='status'>{html.escape(message)}</p>{link}")


def _svg(plot: Plot) -> str:
    pts = [(t, v) for s in plot.series for t, v in s if math.isfinite(v)]
    if not pts:
        return (f"<p class='muted' id='graph'>No data for <code>{html.escape(plot.query)}</code> "
                "in the last hour.</p>")
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
    label = (f"{humanize(lo)} to {humanize(hi)} over the last hour"
             + (f", threshold {humanize(plot.threshold)}" if plot.threshold is not None else ""))
    return (f"<figure id='graph'><svg viewBox='0 0 {W:g} {H:g}' role='img' aria-label='{html.escape(label)}'>"
            f"{limit}{lines}</svg><figcaption>{html.escape(label)} · <code>{html.escape(plot.query)}"
            "</code></figcaption></figure>")


def _alert(a: Mapping[str, object]) -> str:
    labels = a.get("labels") or {}
    assert isinstance(labels, Mapping)
    folded = "".join(f"<li>{html.escape(str(k))}=<b>{html.escape(str(v))}</b></li>"
                     for k, v in labels.items())
    value = a.get("value")
    shown = (f"<p>value <b class='value'>{html.escape(humanize(value))}</b></p>"
             if isinstance(value, float) else "")
    return (f"<li class='alert'><p>{html.escape(str(a.get('summary') or labels.get('alertname', '')))}</p>"
            f"{shown}<details><summary>labels</summary><ul class='labels'>{folded}</ul></details></li>")


def _form(action: str, params: Mapping[str, str], label: str, extra: str = "") -> str:
    query = html.escape(urlencode({**params, "do": action}))
    button = extra or f'<button type="submit" id="{action}">{label}</button>'
    return f"<form method='post' action='?{query}'>{button}</form>"


def _actions(forms: Mapping[str, Mapping[str, str]]) -> str:
    out = []
    if "ack" in forms:  # (already acknowledged: the page says by whom instead)
        out.append(_form("ack", forms["ack"], "Acknowledge"))
    if "escalate" in forms:
        out.append(_form("escalate", forms["escalate"], "Escalate now"))
    if "silence" in forms:
        buttons = "".join(f"<button type=submit name='for' value='{d}' id='silence-{d}'>Silence {d}</button>"
                          for d in SILENCE_FOR)
        out.append(_form("silence", forms["silence"], "", f"<fieldset><legend>Resolve by silence</legend>"
                                                          f"{buttons}</fieldset>"))
    return f"<section class='actions'>{''.join(out)}</section>"


def incident_html(i: Incident, message: str = "") -> str:
    """The page for one firing group (``message``: what the last button did)."""
    since = (f"firing since {_t(i.firing_since)} ({humanize_duration(max(i.now - i.firing_since, 0.0))} ago)"
             if i.firing_since is not None else "resolved")
    runbook = next((str(a["runbook"]) for a in i.alerts if a.get("runbook")), "")
    parts = [
        f"<p id='msg' role='status'>{html.escape(message)}</p>" if message else "",
        f"<h1><span class='tier tier-{html.escape(i.tier or 'other')}'>{html.escape(i.tier or '-')}</span> "
        f"{html.escape(i.title)}</h1>",
        f"<p id='since'>{html.escape(since)}</p>",
        f"<p id='acked' class='ok'>acknowledged by {html.escape(i.acked_by)}</p>" if i.acked_by else "",
        _actions({k: v for k, v in i.forms.items() if not (k == "ack" and i.acked_by)}),
        f"<ul class='alerts'>{''.join(_alert(a) for a in i.alerts)}</ul>",
        f"<p id='runbook'><b>runbook:</b> {html.escape(runbook)}</p>" if runbook else "",
        _svg(i.plot) if i.plot is not None else "",
        "<h2>Who was told</h2>",
        f"<p>{html.escape(i.escalation)}</p>" if i.escalation else "",
        "<ul id='told'>" + "".join(f"<li>{html.escape(t)}</li>" for t in i.told) + "</ul>"
        if i.told else "<p class='muted'>nobody yet</p>",
        f"<p class='muted'>group {html.escape(i.group)} · {html.escape(_t(i.now))}</p>",
    ]
    return _page(i.title, "".join(parts))


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
