"""The default rule pack (``default_pack.yaml`` beside this module)."""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml
from pydantic import TypeAdapter

from inferwatch.settings import RuleSpec

__all__ = ["default_rule_specs", "edge_rule_specs"]


@cache
def default_rule_specs() -> tuple[RuleSpec, ...]:
    """The default pack's rule configs, validated like a user's (``outlier_pack.yaml`` included)."""
    return (*_read("default_pack.yaml"), *_read("outlier_pack.yaml"))


def _read(name: str) -> tuple[RuleSpec, ...]:
    text = resources.files("inferwatch.rules").joinpath(name).read_text("utf-8")
    return tuple(TypeAdapter(list[RuleSpec]).validate_python(yaml.safe_load(text)))


@cache
def edge_rule_specs() -> tuple[RuleSpec, ...]:
    """The edge rules (``edge_pack.yaml``), active with the default pack once ``edge.devices`` is set."""
    text = resources.files("inferwatch.rules").joinpath("edge_pack.yaml").read_text("utf-8")
    return tuple(TypeAdapter(list[RuleSpec]).validate_python(yaml.safe_load(text)))
