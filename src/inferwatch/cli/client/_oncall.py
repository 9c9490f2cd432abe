"""``inferwatch oncall``: who is on call now and next, per schedule and layer (from the config)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from inferwatch.cli._common import add_config_arg, print_json
from inferwatch.cli.client._words import WORDS, local_time

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``oncall``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "oncall", help="who is on call now and next (alerting.oncall.schedules)",
        description="Print, for every schedule and layer of alerting.oncall.schedules, who is on "
        "call now (until when, with their contacts) and who is next. Reads the config only.")
    add_config_arg(p)
    p.add_argument("--at", default=None, help="at this time instead of now (RFC 3339 or unix seconds)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_run)


def _time(raw: str | None) -> float:
    from inferwatch._exceptions import InputError
    from inferwatch.model import SystemClock

    if raw is None:
        return SystemClock().now()
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        t = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"--at: RFC 3339 or unix seconds, got {raw!r}") from None
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()


def _run(args: argparse.Namespace) -> int:
    from inferwatch.alerting import shifts
    from inferwatch.config import load_config

    cfg = load_config(args.config)
    t = _time(args.at)
    rows = shifts(cfg.alerting.oncall, t)
    if args.json:
        print_json({"time": t, "shifts": rows})
        return 0
    w = WORDS[cfg.alerting.language]
    if not rows:
        print(w["no_schedules"])
        return 0
    print(w["shifts"])
    for r in rows:
        now, nxt = r["now"], r["next"]
        assert isinstance(now, dict) and isinstance(nxt, dict)
        until = local_time(float(now["end"]), str(r["timezone"]), seconds=False)
        who = str(now["member"]) + (w["override"] if now["override"] else "")
        contacts = ", ".join(f"{k}: {v}" for k, v in dict(now["contacts"]).items())
        print(f"{r['schedule']}/{r['layer']:<{23 - len(str(r['schedule']))}}  {who[:18]:18}  {until:22}  "
              f"{str(nxt['member'])[:12]:12}  {contacts}")
    return 0

