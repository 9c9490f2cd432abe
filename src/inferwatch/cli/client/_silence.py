"""``inferwatch silence {add,list,expire}``: silences through the server's API (Alertmanager v2 shapes)."""

from __future__ import annotations

import argparse
import getpass
from typing import Any

from inferwatch.cli._common import add_config_arg, print_json
from inferwatch.cli.client._client import add_server_args, call

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``silence``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "silence", help="add, list or expire silences on a running server",
        description="Manage silences through the server's HTTP API. Writes need the API token "
        "(--token, else $INFERWATCH_API_TOKEN, else server.api_token from the config, else the "
        "data directory's generated api_token file); the address is the config's server.listen.")
    add_config_arg(p)
    add_server_args(p)
    verbs = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = verbs.add_parser("add", help="create a silence", description="Create a silence; prints its id.")
    add.add_argument("matchers", nargs="+",
                     help="matchers such as 'service=\"ranker\"' or alertname=~'High.*'")
    add.add_argument("--duration", "-d", default="2h", help="how long, e.g. 30m, 2h (default 2h)")
    add.add_argument("--comment", "-m", required=True, help="why")
    add.add_argument("--author", "-a", default=None, help="created by (default: your user name)")
    add_config_arg(add, again=True)
    add_server_args(add, again=True)
    add.set_defaults(func=_add)
    ls = verbs.add_parser("list", help="list silences", description="List silences (newest first).")
    ls.add_argument("--json", action="store_true", help="print the API's JSON")
    add_config_arg(ls, again=True)
    add_server_args(ls, again=True)
    ls.set_defaults(func=_list)
    ex = verbs.add_parser("expire", help="expire silences now", description="Expire silences by id.")
    ex.add_argument("ids", nargs="+", metavar="ID")
    add_config_arg(ex, again=True)
    add_server_args(ex, again=True)
    ex.set_defaults(func=_expire)


def _add(args: argparse.Namespace) -> int:
    from inferwatch._exceptions import InputError
    from inferwatch.alerting import rfc3339
    from inferwatch.model import MatchOp, parse_duration, parse_matchers

    try:
        matchers = [m for text in args.matchers for m in parse_matchers(text)]
        seconds = parse_duration(args.duration)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    from inferwatch.model import SystemClock

    now = SystemClock().now()
    body = {
        "matchers": [{"name": m.name, "value": m.value, "isRegex": m.op in (MatchOp.RE, MatchOp.NRE),
                      "isEqual": m.op in (MatchOp.EQ, MatchOp.RE)} for m in matchers],
        "startsAt": rfc3339(now), "endsAt": rfc3339(now + seconds),
        "createdBy": args.author or getpass.getuser(), "comment": args.comment,
    }
    print(call(args, "POST", "/api/v2/silences", body)["silenceID"])
    return 0


def _list(args: argparse.Namespace) -> int:
    silences = call(args, "GET", "/api/v2/silences")
    if args.json:
        print_json(silences)
        return 0
    print(f"{'ID':36}  {'STATE':8}  {'ENDS':24}  {'BY':10}  MATCHERS / COMMENT")
    for s in silences:
        ms = ",".join(f"{m['name']}{_op(m)}\"{m['value']}\"" for m in s["matchers"])
        print(f"{s['id']:36}  {s['status']['state']:8}  {s['endsAt']:24}  {s['createdBy'][:10]:10}  "
              f"{{{ms}}} {s['comment']}")
    return 0


def _op(m: dict[str, Any]) -> str:
    return {(False, True): "=", (False, False): "!=", (True, True): "=~", (True, False): "!~"}[
        (bool(m.get("isRegex")), bool(m.get("isEqual", True)))]


def _expire(args: argparse.Namespace) -> int:
    for sid in args.ids:
        call(args, "DELETE", f"/api/v2/silence/{sid}")
        print(f"expired {sid}")
    return 0
