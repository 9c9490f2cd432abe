"""``inferwatch history``: the alert history of a running server, or MTTA/MTTR with ``--stats``."""

from __future__ import annotations

import argparse
from typing import Any

from inferwatch.cli._common import add_config_arg, print_json
from inferwatch.cli.client._client import add_server_args, call, since_start
from inferwatch.cli.client._words import HISTORY_KINDS, WORDS, local_time

__all__ = ["add_parser", "history_line"]


def add_parser(sub: Any) -> None:
    """Register ``history``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "history", help="what fired, who was told and when, who acknowledged (a running server)",
        description="Print the alert history: firing, resolved, notified (receiver and outcome), "
        "escalated, acknowledged, answered or unanswered (confirmed calls), silenced, inhibited and "
        "action events, oldest first. Each MATCHER "
        "selects events whose labels match it (any of them). --stats prints MTTA and MTTR per "
        "service and tier instead.")
    add_config_arg(p)
    add_server_args(p)
    p.add_argument("matchers", nargs="*", help="label matchers such as 'service=\"ranker\"'")
    p.add_argument("--since", default="24h", help="how far back (default 24h)")
    p.add_argument("--kind", action="append", default=[], help="only these event kinds (repeatable)")
    p.add_argument("--group", default="", help="only this group id")
    p.add_argument("--stats", action="store_true", help="MTTA and MTTR per service and tier")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from inferwatch.config import load_config

    alerting = load_config(args.config).alerting  # the language and zone the team reads

    start = since_start(args.since)
    if args.stats:
        rows = call(args, "GET", "/api/v1/alerts/stats", params=[("start", f"{start:.3f}")])["data"]
        if args.json:
            print_json(rows)
            return 0
        print(WORDS[alerting.language]["stats"])
        for r in rows:
            print(f"{r['service'][:16]:16}  {r['tier'][:4]:4}  {r['alerts']:6}  {r['acknowledged']:5}  "
                  f"{_dur(r['mtta_seconds']):8}  {r['resolved']:8}  {_dur(r['mttr_seconds'])}")
        return 0
    params = [("start", f"{start:.3f}"), *(("match[]", m) for m in args.matchers),
              *(("kind", k) for k in args.kind)]
    if args.group:
        params.append(("group", args.group))
    events = call(args, "GET", "/api/v1/alerts/history", params=params)["data"]
    if args.json:
        print_json(events)
        return 0
    for e in events:
        print(history_line(e, alerting.language, alerting.timezone))
    return 0


def history_line(e: dict[str, Any], language: str = "en", timezone: str = "UTC") -> str:
    """One event: its time in ``timezone``, its kind and what happened, in ``language``."""
    kind = HISTORY_KINDS.get(language, {}).get(e["kind"], e["kind"])
    return f"{local_time(e['t'], timezone)}  {kind:14}  {_what(e, WORDS.get(language, WORDS['en']))}"


def _dur(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    from inferwatch.model import format_duration

    return format_duration(round(seconds))


def _sms(d: dict[str, Any], w: dict[str, str]) -> str:
    """Whether the number nobody answered at was texted (a voice receiver's ``sms_fallback``)."""
    sms = str((d.get("record") or {}).get("sms", ""))
    return w["texted"] if sms == "sent" else w["text_failed"] if sms else ""


def _what(e: dict[str, Any], w: dict[str, str]) -> str:
    labels = e["labels"]
    name = labels.get("alertname", "")
    rest = ",".join(f"{k}={v}" for k, v in labels.items() if k in ("service", "tier", "instance", "feature"))
    d = e.get("detail", {})
    extra = {
        "notified": lambda: f"-> {d.get('receiver')} {d.get('outcome')}"
                            + (w["step"].format(n=d["step"]) if d.get("step") else ""),
        "escalated": lambda: w["esc_step"].format(policy=d.get("escalation"), n=d.get("step")) + " -> "
                             + ",".join(d.get("receivers", [])),
        "acknowledged": lambda: w["by"].format(who=d.get("by"))
                                + (f": {d['comment']}" if d.get("comment") else ""),
        "unacknowledged": lambda: w["by"].format(who=d.get("by")),
        "answered": lambda: w["by"].format(who=d.get("by")),
        "unanswered": lambda: w["rounds"].format(number=d.get("number"), n=d.get("rounds")) + _sms(d, w),
        "action": lambda: f"{d.get('action')} {d.get('phase')}: {d.get('outcome')}",
    }.get(e["kind"], lambda: "")()
    return f"{name} {{{rest}}} {extra}".rstrip()
