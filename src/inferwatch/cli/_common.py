"""Small helpers shared by the verbs."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["AddParser", "add_config_arg", "print_json"]

AddParser = Callable[[Any], None]
"""A verb's ``add_parser(subparsers)``: adds the verb's parser and sets its handler."""


def add_config_arg(parser: argparse.ArgumentParser, *, required: bool = False,
                   again: bool = False) -> None:
    """Add ``--config FILE`` (default ``$INFERWATCH_CONFIG``, then ./inferwatch.yaml, then the defaults).

    ``again``: the verb's parser has it too; the action's copy must not reset what was given before it.
    """
    parser.add_argument(
        "--config", "-c", metavar="FILE", required=required,
        default=argparse.SUPPRESS if again else None,
        help="YAML config (default: $INFERWATCH_CONFIG, else ./inferwatch.yaml, else the built-in defaults)",
    )


def print_json(obj: Any) -> None:
    """Write ``obj`` as indented JSON to stdout."""
    json.dump(obj, sys.stdout, indent=2, sort_keys=False, allow_nan=False, default=str)
    sys.stdout.write("\n")
