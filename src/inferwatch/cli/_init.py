"""``inferwatch init``: write a commented ``inferwatch.yaml`` that scrapes one app and routes P0/P1/P2."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["RECEIVER_KEYS", "add_parser", "render"]

# receiver type -> the field its one credential goes in (terminal needs none)
RECEIVER_KEYS: dict[str, str | None] = {
    "terminal": None, "wecom": "key", "pagerduty": "routing_key", "slack": "webhook_url",
    "dingtalk": "url", "feishu": "url", "webhook": "url",
}
DEFAULT_URL = "http://127.0.0.1:8000/metrics"

TEMPLATE = """\
# inferwatch.yaml written by `inferwatch init`; check it with `inferwatch config check`.
# `inferwatch config show` prints every field with its default;
# `inferwatch serve` (no arguments) reads this file.
server:
  listen: {listen:<26}# the dashboard and the HTTP API: http://{listen_raw}/
  data_dir: ./data                  # SQLite store, alert state and the generated api_token

scrape:
  targets:
    # your model server's /metrics (instrumented with inferwatch.sdk: docs/sdk.md)
    - {{job: {job}, url: {url}}}

# rules: the default pack applies as is (`inferwatch rules list` shows it);
# tune it with rules.disable / rules.overrides (docs/rules.md).

alerting:
  route:                            # Alertmanager's route tree (docs/alerting.md)
    receiver: terminal              # anything not matched below is printed
    group_by: [alertname, service]
    routes:
      - {{matchers: ['tier="P0"'], receiver: oncall}}   # P0: service down, page now
      - {{matchers: ['tier="P1"'], receiver: oncall}}   # P1: degraded, notify the team
      - {{matchers: ['tier="P2"'], receiver: digest}}   # P2: trends, once a day
  # The default actions (scale_out on P0 through the Kubernetes API, degrade, rollback) stay off
  # until you have set them up: default_actions: true, and docs/alerting.md's actions.
  default_actions: false
  receivers:
    - {receiver}
    - {{name: digest, type: digest, at: "09:00", timezone: UTC, deliver_to: oncall}}
"""


def add_parser(sub: Any) -> None:
    """Register ``init``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "init", help="write a starter inferwatch.yaml for your app",
        description="Write a commented inferwatch.yaml that scrapes your app's /metrics with the "
        "default rule pack and routes P0 and P1 to one receiver, P2 to a daily digest. With no "
        "flags on a terminal it asks; otherwise the flags (or their defaults) are used. The file "
        "passes `inferwatch config check`; `inferwatch serve` in the same directory finds it.")
    p.add_argument("--url", help=f"your app's metrics URL (default {DEFAULT_URL})")
    p.add_argument("--job", help="the job label for it (default: app)")
    p.add_argument("--receiver", choices=sorted(RECEIVER_KEYS),
                   help="where P0/P1 go (default terminal: printed, no credentials needed)")
    p.add_argument("--key", help="the receiver's credential: wecom key, pagerduty routing_key, "
                   "slack webhook_url, dingtalk/feishu/webhook url")
    p.add_argument("--listen", help="the server's host:port (default 127.0.0.1:9464)")
    p.add_argument("--output", "-o", default="inferwatch.yaml", metavar="FILE",
                   help="where to write (default ./inferwatch.yaml)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.set_defaults(func=_init)


def _init(args: argparse.Namespace) -> int:
    from inferwatch._exceptions import InputError

    out = Path(args.output)
    if out.exists() and not args.force:
        raise InputError(f"{out}: already exists (--force overwrites it)")
    flags = (args.url, args.job, args.receiver, args.key, args.listen)
    if all(f is None for f in flags) and sys.stdin.isatty():
        _ask(args)
    text = render(url=args.url or DEFAULT_URL, job=args.job or "app", receiver=args.receiver or "terminal",
                  key=args.key, listen=args.listen or "127.0.0.1:9464")
    _validate(text, out)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}: scrapes {args.url or DEFAULT_URL}, P0/P1 -> {args.receiver or 'terminal'}, "
          "P2 -> daily digest; next: inferwatch serve")
    return 0


def _ask(args: argparse.Namespace) -> None:
    """Prompt for what the flags did not say (only on a terminal)."""
    args.url = input(f"Your app's metrics URL [{DEFAULT_URL}]: ").strip() or None
    kinds = "/".join(sorted(RECEIVER_KEYS))
    args.receiver = input(f"Receiver for P0/P1 ({kinds}) [terminal]: ").strip() or None
    field = RECEIVER_KEYS.get(args.receiver or "terminal")
    if field:
        args.key = input(f"{args.receiver} {field}: ").strip() or None


def render(*, url: str, job: str, receiver: str, key: str | None, listen: str) -> str:
    """The config text; ``key`` goes into the receiver type's credential field."""
    from inferwatch._exceptions import InputError

    if receiver not in RECEIVER_KEYS:
        raise InputError(f"--receiver: unknown type {receiver!r} (one of {', '.join(sorted(RECEIVER_KEYS))})")
    field = RECEIVER_KEYS[receiver]
    if field is None and key:
        raise InputError(f"--key: the {receiver} receiver takes no credential")
    if field is not None and not key:
        raise InputError(f"--key: the {receiver} receiver needs its {field}")
    spec = f"{{name: oncall, type: {receiver}"
    spec += f", {field}: {_q(key or '')}}}" if field else "}"
    # JSON strings are YAML double-quoted scalars: any URL or key is quoted safely
    return TEMPLATE.format(listen=_q(listen), listen_raw=listen, job=_q(job), url=_q(url), receiver=spec)


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _validate(text: str, out: Path) -> None:
    """Every check `config check` makes, before anything is written."""
    from inferwatch.config import parse_config
    from inferwatch.server import preflight

    preflight(parse_config(text, source=str(out)))
