"""``inferwatch template test``: render a receiver's message for alerts in a file, without sending it."""

from __future__ import annotations

import argparse
from typing import Any

from inferwatch.cli._common import add_config_arg

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``template``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "template", help="render a receiver's message without sending it",
        description="Render what a receiver would send for the alerts in a file (Alertmanager's webhook "
        "JSON, a list of alerts or one alert, as JSON or YAML): signed, cut to the platform's limit, in "
        "the configured language and time zone. Nothing is sent; secrets print as <secret>.",
    )
    verbs = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    test = verbs.add_parser("test", help="render one receiver's message")
    add_config_arg(test)
    test.add_argument("--receiver", required=True, metavar="NAME", help="a receiver of the config")
    test.add_argument("--alert", required=True, metavar="FILE", help="JSON or YAML alerts")
    test.add_argument("--language", choices=("en", "zh-CN"), help="override alerting.language")
    test.add_argument("--now", metavar="RFC3339", help="the time of the notification (default: the last "
                      "alert's start, so the output is the same on every run)")
    test.set_defaults(func=_test)


def _test(args: argparse.Namespace) -> int:
    from pathlib import Path

    import yaml

    from inferwatch._exceptions import InputError
    from inferwatch.alerting import alerts_from_document, parse_rfc3339, preview
    from inferwatch.config import load_config

    config = load_config(args.config)
    alerting = config.alerting
    if args.language:
        alerting = alerting.model_copy(update={"language": args.language})
    try:
        doc = yaml.safe_load(Path(args.alert).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(f"{args.alert}: cannot read alerts: {exc}") from None
    alerts = alerts_from_document(doc, args.alert)
    try:
        now = parse_rfc3339(args.now) if args.now else max(a.starts_at for a in alerts)
    except ValueError as exc:
        raise InputError(f"--now: {exc}") from None
    shown = preview(alerting, args.receiver, alerts, now or 0.0, config.server.external_url)
    print("\n\n".join(c.show() for c in shown) if shown else f"{args.receiver}: nothing would be sent")
    return 0
