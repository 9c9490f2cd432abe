"""``inferwatch slo {check,status}``: validate a Sloth spec, show each SLO's budget on a running server."""

from __future__ import annotations

import argparse
from typing import Any

from inferwatch.cli._client import add_server_args
from inferwatch.cli._common import add_config_arg, print_json

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``slo``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "slo", help="check SLO specs, show error budgets",
        description="Service-level objectives: Sloth prometheus/v1 spec files and the config's "
        "slos: shorthands, turned into Sloth's recording rules and multi-window burn-rate alerts.")
    verbs = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = verbs.add_parser(
        "check", help="validate a Sloth spec file (or the config's SLOs) and print the rules",
        description="Read a Sloth prometheus/v1 spec as it is (or, without FILE, the config's slos "
        "and slo_files), generate its rules and print a summary; --rules prints the Prometheus rule "
        "file. Exit 1 with the reason when the spec is invalid.")
    check.add_argument("file", nargs="?", metavar="FILE", help="a Sloth prometheus/v1 spec")
    add_config_arg(check)
    check.add_argument("--period", default="30d", choices=("30d", "28d"), help="the SLO period (default 30d)")
    check.add_argument("--rules", action="store_true", help="print the generated rule file (YAML)")
    check.set_defaults(func=_check)
    status = verbs.add_parser(
        "status", help="each SLO's SLI, budget left and burn rates, from a running server",
        description="Ask the server (GET /api/v1/slos) where each SLO stands: the SLI over 5 minutes, "
        "the error budget left over the period, the burn rate per window and the burning alerts.")
    add_config_arg(status)
    add_server_args(status)
    status.add_argument("--json", action="store_true", help="print the API's JSON")
    status.set_defaults(func=_status)


def _check(args: argparse.Namespace) -> int:
    import yaml

    from inferwatch.config import SloFileRef, load_config
    from inferwatch.model import parse_duration
    from inferwatch.slo import load_slos, load_sloth_file, slo_rules

    if args.file:
        slos = load_sloth_file(SloFileRef(path=args.file, period=parse_duration(args.period)))
    else:
        slos = load_slos(load_config(args.config))
    rules = slo_rules(slos)
    if args.rules:
        print(yaml.safe_dump({"groups": rules.prometheus_groups()}, sort_keys=False, width=1000), end="")
        return 0
    for s in slos:
        alerts = [a for a in rules.alerts if rules.slo_id(a) == s.id]
        print(f"{s.id}: objective {s.objective:g}% over {s.period_days}d, "
              f"{'events' if hasattr(s.sli, 'total_query') else 'raw'} SLI; alerts: "
              + (", ".join(_alert_name(a) for a in alerts) or "none"))
    print(f"{len(slos)} SLOs ok: {len(rules.recordings)} recording rules, {len(rules.alerts)} alerts")
    return 0


def _alert_name(a: Any) -> str:
    # a Sloth spec's alerts share one name: its window (slo_alert) tells them apart
    where = f" [{a.labels.get('sloth_severity')}, {a.labels.get('slo_alert')}]" if a.key else ""
    return f"{a.name}{where} ({a.tier.value})"


def _fmt(v: float | None, pct: bool = False) -> str:
    if v is None:
        return "-"
    return f"{v * 100:.3f}%" if pct else f"{v:.2f}x"


def _status(args: argparse.Namespace) -> int:
    from inferwatch.cli._client import call

    resp = call(args, "GET", "/api/v1/slos")
    data = resp.get("data", [])
    if args.json:
        print_json(data)
        return 0
    if not data:
        print("no SLOs (declare slos: or slo_files: in the config)")
    for s in data:
        burn = "  ".join(f"{w['window']} {_fmt(w['burn_rate'])}" for w in s["windows"])
        firing = sorted({a["alertname"] for a in s["alerts"] if a["state"] == "firing"})
        print(f"{s['id']}: objective {s['objective']:g}%  SLI {_fmt(s['sli'], True)}  "
              f"budget left {_fmt(s['budget_remaining'], True)} of {s['period']}")
        cover = s.get("data_coverage")
        if cover is not None:  # the budget rests on what was observed: say how much of the period that is
            sec = s["observed_seconds"]
            seen = f"{sec / 60:.0f} min" if sec < 5400 else f"{sec / 3600:.3g} h"
            print(f"  data  {seen} observed, {_fmt(cover, True)} of {s['period']}: "
                  "the budget is computed over what was observed")
        print(f"  burn  {burn}")
        print(f"  burning: {', '.join(s['burning']) or 'none'}; firing: {', '.join(firing) or 'none'}")
        down = s.get("downtime")
        if down:  # what counted the bad events: the SDK's 5xx, and the time the service was unreachable
            print(f"  bad events: {s['errors_from']} + downtime from {down['source']}: unreachable "
                  f"{_fmt(down['unreachable_5m'], True)} of 5m, {_fmt(down['unreachable_period'], True)} "
                  f"of {s['period']}")
    return 0
