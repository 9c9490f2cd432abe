"""Entry point: builds the verb parsers, runs one, turns errors into one line."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from inferwatch import __version__
from inferwatch._exceptions import InferwatchError
from inferwatch.cli import (
    _config,
    _demo,
    _diagnose,
    _edge,
    _export,
    _exporter,
    _init,
    _probe,
    _replay,
    _rules,
    _serve,
    _store,
    _template,
)
from inferwatch.cli._common import AddParser
from inferwatch.cli.analysis import ANALYSIS_VERBS
from inferwatch.cli.client import CLIENT_VERBS

__all__ = ["main"]

# Every verb and the function adding its parser, in --help's order. The verb modules import heavy
# dependencies inside their handlers, so that ``--help`` stays fast.
VERBS: tuple[tuple[str, AddParser], ...] = (
    ("init", _init.add_parser),
    ("config", _config.add_parser),
    *ANALYSIS_VERBS,  # drift, profile, performance, abtest, baseline
    ("demo", _demo.add_parser),
    ("replay", _replay.add_parser),
    ("rules", _rules.add_parser),
    ("export", _export.add_parser),
    ("serve", _serve.add_parser),
    ("exporter", _exporter.add_parser),
    ("edge", _edge.add_parser),
    ("diagnose", _diagnose.add_parser),
    *CLIENT_VERBS,  # silence, ack, history, oncall, slo, generations
    ("probe", _probe.add_parser),
    ("template", _template.add_parser),
    ("store", _store.add_parser),
)

DEFAULT_FILE = "inferwatch.yaml"  # what `init` writes and every verb reads without --config
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def build_parser() -> argparse.ArgumentParser:
    """The full parser, every verb registered."""
    parser = argparse.ArgumentParser(
        prog="inferwatch",
        description="Monitoring and alerting for AI inference services.",
    )
    parser.add_argument("--version", action="version", version=f"inferwatch {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for _verb, add_parser in VERBS:
        add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (never a traceback for our errors)."""
    from inferwatch.model import StopRequest

    # first: a SIGTERM while serve, the agent or the exporter starts is a stop (exit 0), not exit 143
    stop = StopRequest().install()
    try:
        args = build_parser().parse_args(argv)
    except SystemExit:
        stop.release()
        raise
    if not getattr(args, "until_stopped", False):
        stop.release()  # every other verb: Python's defaults, and a signal caught meanwhile goes to them
        return _dispatch(args)
    args.own_process = argv is None  # the process is this command's own (the exporter may execv)
    args.stop = stop  # acted on where stopping is safe: after start-up, or at once if it came during it
    try:
        return _dispatch(args)
    finally:
        stop.release(deliver=False)  # acted on; an in-process caller gets its own handlers back


def _dispatch(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args.verb != "edge":  # the edge agent has no httpx (http.client) and must not load pydantic
        from inferwatch.config import install_log_redaction

        install_log_redaction()  # httpx logs request URLs (a WeCom key, a Slack webhook path)
    if args.verb not in ("edge", "init"):  # the edge agent's --config is its own file
        _find_config(args)
    try:
        code = args.func(args)
    except InferwatchError as exc:
        print(f"inferwatch {args.verb}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE if exc.__class__.__name__ in ("ConfigError", "InputError") else EXIT_FAIL
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    return int(code or 0)


def _find_config(args: argparse.Namespace) -> None:
    """No ``--config`` and no ``$INFERWATCH_CONFIG``: ``./inferwatch.yaml`` when there is one."""
    import os
    from pathlib import Path

    from inferwatch._env import ENV_CONFIG

    # a positional FILE (`config check other.yml`) is the config asked for: ./inferwatch.yaml is not
    unset = getattr(args, "config", "") is None and not os.environ.get(ENV_CONFIG) and not getattr(
        args, "file", None)
    if unset and Path(DEFAULT_FILE).is_file():
        args.config = DEFAULT_FILE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
