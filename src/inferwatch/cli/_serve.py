"""``inferwatch serve``: the embedded server (scrape, store, evaluate, HTTP API)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from inferwatch.cli._common import add_config_arg

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``serve``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "serve", help="run the embedded server",
        description="Scrape the configured targets into the SQLite store, evaluate the rules every "
        "server.evaluation_interval and serve the HTTP API and the web dashboard at / (default "
        "127.0.0.1:9464). SIGHUP or "
        "POST /-/reload (with the API token) re-reads the config: targets, rules, baselines, the "
        "alerting section (routes, receivers, escalations), server.api_token, server.auth and the web "
        "config file (users, certificates) change without a restart; storage, data_dir, listen "
        "address, alerting.alertmanagers, remote_write, "
        "server.query, server.http, server.outcomes, server.external_url and edge need one (the "
        "reload's reply names each). A file that sets nothing but defaults is refused unless "
        "POST /-/reload?force=true. One server per data directory (a lock; a second start names "
        "the holder's pid). Queries run in a bounded pool (server.query: timeout 2m, max_samples 50M), "
        "scrapes within their timeout and Prometheus's per-target limits, requests within "
        "server.http's connection, header-time and body limits (docs/server.md). Who may do what: "
        "server.api_token is the admin token; server.auth adds named tokens with roles (viewer, "
        "responder, ingest, admin) and says whether reads need credentials (by default they do "
        "unless listening on loopback); the web config file adds TLS and basic-auth users, and the "
        "dashboard signs in at /login (docs/security.md).",
    )
    add_config_arg(p)
    p.add_argument("--listen", metavar="HOST:PORT", help="override server.listen (port 0 picks a free port)")
    p.add_argument("--web.config.file", dest="web_config_file", metavar="FILE",
                   help="Prometheus's web configuration file (TLS, basic_auth_users with bcrypt hashes); "
                   "overrides server.auth.web_config_file; re-read on every reload")
    p.add_argument("--speed", type=float, metavar="X",
                   help="run on compressed time, X times faster than real time (replays, tests, "
                   "demos: scrapes, evaluations and for-durations all follow that clock)")
    p.add_argument("--start", metavar="TIME",
                   help="with --speed: the clock's start (epoch seconds or ISO 8601; default now)")
    p.add_argument("--start-anchor", metavar="TIME",
                   help="with --speed: the real time at which the clock read --start (epoch seconds or "
                   "ISO 8601; default now): two serves given the same --start and --start-anchor "
                   "share one compressed clock (an HA pair on compressed time)")
    p.set_defaults(func=_serve, until_stopped=True)


def _stopped(args: argparse.Namespace) -> bool:
    """Whether a stop came before the server was built (said once: nothing is open to close)."""
    stop = getattr(args, "stop", None)
    if stop is None or stop.requested is None:
        return False
    print(f"inferwatch serve: {stop.name}: stopping before the start (nothing was opened)", file=sys.stderr,
          flush=True)
    return True


def _serve(args: argparse.Namespace) -> int:
    if _stopped(args):  # looked at before each heavy import, so a stop while starting ends soon
        return 0
    from inferwatch._env import ENV_CONFIG
    from inferwatch._exceptions import InputError
    from inferwatch.config import Config, load_config, with_web_config
    from inferwatch.model import Clock, ScaledClock

    def load() -> Config:
        return with_web_config(load_config(args.config), args.web_config_file)

    cfg = load()  # None: $INFERWATCH_CONFIG, else the defaults
    if _stopped(args):
        return 0
    from inferwatch.server import serve

    if args.config is None and not os.environ.get(ENV_CONFIG):  # not even ./inferwatch.yaml (cli._main)
        print("inferwatch serve: no config (--config, $INFERWATCH_CONFIG or ./inferwatch.yaml): the "
              "built-in defaults, no targets; `inferwatch init` writes one for your app", file=sys.stderr)
    clock: Clock | None = None
    if args.speed is not None and not args.speed > 0:
        raise InputError(f"--speed: must be positive, got {args.speed:g}")
    if args.speed is not None or args.start is not None:
        anchor = _start(args.start_anchor, "--start-anchor")
        clock = ScaledClock(args.speed or 1.0, _start(args.start), anchor)
    serve(cfg, listen=args.listen, clock=clock, reload=load, stop=getattr(args, "stop", None))
    return 0


def _start(text: str | None, flag: str = "--start") -> float | None:
    from inferwatch._exceptions import InputError
    from inferwatch.baseline import parse_timestamp

    if text is None:
        return None
    try:
        return parse_timestamp(text)
    except ValueError:
        raise InputError(f"{flag}: not a time (epoch seconds or ISO 8601): {text!r}") from None
