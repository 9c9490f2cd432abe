"""``inferwatch ack``: acknowledge (``--undo``: unacknowledge) alert groups; ``--list`` shows them."""

from __future__ import annotations

import argparse
import getpass
from typing import Any

from inferwatch.cli._common import add_config_arg, print_json
from inferwatch.cli.client._client import add_server_args, call

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``ack``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "ack", help="acknowledge alert groups on a running server (stops escalation and repeats)",
        description="Acknowledge the firing groups that hold an alert matching every MATCHER, or the "
        "group --group ID. The acknowledgement ends when the group resolves (or at --expires). "
        "--undo ends it now; --list shows the groups with their acknowledgement and escalation.")
    add_config_arg(p)
    add_server_args(p)
    p.add_argument("matchers", nargs="*", help="matchers such as 'alertname=\"Down\"' service=ranker")
    p.add_argument("--group", "-g", default="", help="a group id (from --list or a notification's link)")
    p.add_argument("--comment", "-m", default="", help="why, or what you are doing")
    p.add_argument("--by", default=None, help="who acknowledges (default: your user name)")
    p.add_argument("--expires", default=None, help="end after this long (e.g. 2h) even if still firing")
    p.add_argument("--undo", action="store_true", help="unacknowledge instead")
    p.add_argument("--list", action="store_true", help="list the groups")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from inferwatch._exceptions import InputError

    if args.list:
        return _list(args)
    if not args.matchers and not args.group:
        raise InputError("ack: give matchers or --group ID (see --list)")
    body = {"matchers": args.matchers, "group_id": args.group, "by": args.by or getpass.getuser(),
            "comment": args.comment, "expires": args.expires}
    path = "/api/v1/alerts/unack" if args.undo else "/api/v1/alerts/ack"
    answer = call(args, "POST", path, body)
    if args.json:
        print_json(answer)
        return 0
    verb = "unacknowledged" if args.undo else "acknowledged"
    for a in answer[verb]:
        print(f"{verb} group {a['group_id']} by {a['by']}" + (f": {a['comment']}" if a["comment"] else ""))
    return 0


def _list(args: argparse.Namespace) -> int:
    groups = call(args, "GET", "/api/v1/alerts/oncall-groups")
    if args.json:
        print_json(groups)
        return 0
    print(f"{'GROUP':16}  {'STATUS':8}  {'FIRING':6}  {'ACK':20}  {'ESCALATION':16}  LABELS")
    for g in groups:
        ack = f"{g['ack']['by']}" if g["ack"] else "-"
        esc = g["escalation"]
        step = f"{esc['policy']} step {esc['step']}" if esc else "-"
        labels = ",".join(f'{k}="{v}"' for k, v in g["labels"].items())
        print(f"{g['group_id']:16}  {g['status']:8}  {g['firing']:6}  {ack[:20]:20}  {step[:16]:16}  "
              f"{{{labels}}}")
    return 0
