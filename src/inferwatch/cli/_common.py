"""Small helpers shared by the verbs."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_config_arg", "print_json"]


def add_config_arg(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    """Add ``--config FILE`` (defaults to ``$INFERWATCH_CONFIG``, then built-in defaults)."""
    parser.add_argument(
        "--config", "-c", metavar="FILE", required=required,
        help="YAML config (default: $INFERWATCH_CONFIG, else the built-in defaults)",
    )


def print_json(obj: Any) -> None:
    """Write ``obj`` as indented JSON to stdout."""
    json.dump(obj, sys.stdout, indent=2, sort_keys=False, allow_nan=False, default=str)
    sys.stdout.write("\n")
