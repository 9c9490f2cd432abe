"""``inferwatch config check|show``: validate a config, print the effective one."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from inferwatch.cli._common import add_config_arg

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``config``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "config", help="validate a config file or print the effective config",
        description="Validate a YAML config with every check `serve` makes (errors name the file, "
        "field and value: YAML, fields, PromQL, templates, receivers) "
        "or print the effective config with every default filled in; secrets print as <secret>.",
    )
    verbs = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = verbs.add_parser("check", help="validate a config file")
    _file_args(check)
    check.set_defaults(func=_check)
    show = verbs.add_parser("show", help="print the effective config as YAML")
    _file_args(show)
    show.set_defaults(func=_show)


def _file_args(p: argparse.ArgumentParser) -> None:
    """``FILE`` or ``--config FILE``, the same (every verb takes ``--config``)."""
    p.add_argument("file", metavar="FILE", nargs="?", help="the config (same as --config)")
    add_config_arg(p)


def _path(args: argparse.Namespace) -> str | None:
    from inferwatch._exceptions import InputError

    if args.file and args.config and args.file != args.config:
        raise InputError(f"two configs given: {args.file} and --config {args.config}")
    path: str | None = args.file or args.config
    return path


def _check(args: argparse.Namespace) -> int:
    from inferwatch._env import ENV_CONFIG
    from inferwatch._exceptions import ConfigError
    from inferwatch.config import load_config
    from inferwatch.server import config_warnings, preflight

    path = _path(args) or os.environ.get(ENV_CONFIG)
    if not path:
        raise ConfigError("no config: give FILE or --config FILE (or write one: inferwatch init)")
    config = load_config(path)
    try:
        rules = preflight(config)  # every check `serve` makes: PromQL, templates, receivers, ...
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    for warning in config_warnings(config):
        print(f"{path}: warning: {warning}", file=sys.stderr)
    print(f"{path}: ok ({len(rules)} rules)")
    return 0


def _show(args: argparse.Namespace) -> int:
    import yaml

    from inferwatch.config import load_config, mask_secret_fields

    cfg = load_config(_path(args))
    # secrets print as <secret> already; a URL (a scrape target's) is shown without user:pass@ and ?tok=
    shown = mask_secret_fields(cfg.model_dump(mode="json", by_alias=True), frozenset())
    print(yaml.safe_dump(shown, sort_keys=False), end="")
    return 0
