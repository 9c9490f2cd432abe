"""``inferwatch config check|show``: validate a config, print the effective one."""

from __future__ import annotations

import argparse
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
    check.add_argument("file", metavar="FILE")
    check.set_defaults(func=_check)
    show = verbs.add_parser("show", help="print the effective config as YAML")
    add_config_arg(show)
    show.set_defaults(func=_show)


def _check(args: argparse.Namespace) -> int:
    from inferwatch._exceptions import ConfigError
    from inferwatch.config import load_config
    from inferwatch.server import config_warnings, preflight

    config = load_config(args.file)
    try:
        rules = preflight(config)  # every check `serve` makes: PromQL, templates, receivers, ...
    except ConfigError as exc:
        raise ConfigError(f"{args.file}: {exc}") from None
    for warning in config_warnings(config):
        print(f"{args.file}: warning: {warning}", file=sys.stderr)
    print(f"{args.file}: ok ({len(rules)} rules)")
    return 0


def _show(args: argparse.Namespace) -> int:
    import yaml

    from inferwatch.config import load_config

    cfg = load_config(args.config)
    print(yaml.safe_dump(cfg.model_dump(mode="json", by_alias=True), sort_keys=False), end="")
    return 0
