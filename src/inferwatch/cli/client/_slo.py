"""``inferwatch slo {check,status}``: validate a Sloth spec, show each SLO's budget on a running server."""

from __future__ import annotations

import argparse
from typing import Any

from inferwatch.cli._common import add_config_arg, print_json
from inferwatch.cli.client._client import add_server_args
from inferwatch.cli.client._words import SLO_WORDS

__all__ = ["add_parser", "status_lines"]


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
    from inferwatch.cli.client._client import call
    from inferwatch.config import load_config

    resp = call(args, "GET", "/api/v1/slos")
    data = resp.get("data", [])
    if args.json:
        print_json(data)
        return 0
    for line in status_lines(data, load_config(args.config).alerting.language):
        print(line)
    return 0


def _data_line(s: dict[str, Any], w: dict[str, str]) -> list[str]:
    """The share of the period the budget rests on (none under a minute of data)."""
    cover = s.get("data_coverage")
    if cover is None:
        return []
    sec = s["observed_seconds"]
    seen = f"{sec / 60:.0f} min" if sec < 5400 else f"{sec / 3600:.3g} h"
    return [w["data"].format(seen=seen, cover=_fmt(cover, True), period=s["period"])]


def status_lines(data: list[dict[str, Any]], language: str = "en") -> list[str]:
    """The API's SLOs as ``slo status`` prints them, in ``language``."""
    w = SLO_WORDS.get(language, SLO_WORDS["en"])
    if not data:
        return [w["none"]]
    out = []
    for s in data:
        burn = "  ".join(f"{x['window']} {_fmt(x['burn_rate'])}" for x in s["windows"])
        firing = sorted({a["alertname"] for a in s["alerts"] if a["state"] == "firing"})
        out += [w["head"].format(id=s["id"], objective=f"{s['objective']:g}", sli=_fmt(s["sli"], True),
                                 budget=_fmt(s["budget_remaining"], True), period=s["period"]),
                *_data_line(s, w),
                w["burn"].format(burn=burn),
                w["state"].format(burning=", ".join(s["burning"]) or w["nothing"],
                                  firing=", ".join(firing) or w["nothing"])]
        down = s.get("downtime")
        if down:  # what counted the bad events: the SDK's 5xx, and the time the service was unreachable
            out.append(w["down"].format(errors=s["errors_from"], source=down["source"],
                                        m5=_fmt(down["unreachable_5m"], True), period=s["period"],
                                        period_down=_fmt(down["unreachable_period"], True)))
    return out
