"""``inferwatch serve``: the embedded server (scrape, store, evaluate, HTTP API)."""

from __future__ import annotations

import argparse
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
        "POST /-/reload (with the API token) re-reads the config: targets, rules and baselines "
        "change without a restart; storage, listen address, alerting, server.query and server.http "
        "need one. Queries run in a bounded pool (server.query: timeout 2m, max_samples 50M), "
        "scrapes within their timeout and Prometheus's per-target limits, requests within "
        "server.http's connection, header-time and body limits (docs/server.md).",
    )
    add_config_arg(p)
    p.add_argument("--listen", metavar="HOST:PORT", help="override server.listen (port 0 picks a free port)")
    p.set_defaults(func=_serve)


def _serve(args: argparse.Namespace) -> int:
    from inferwatch.config import load_config
    from inferwatch.server import serve

    cfg = load_config(args.config)  # None: $INFERWATCH_CONFIG, else the defaults
    serve(cfg, listen=args.listen, reload=lambda: load_config(args.config))
    return 0
