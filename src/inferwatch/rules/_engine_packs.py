"""Engine rule packs (``packs/<name>.yaml`` beside this module), selected by ``rules.packs``.

Each pack alerts on the metrics an inference engine exposes itself (vLLM,
NVIDIA Triton, Hugging Face TGI), mapped onto inferwatch's tiers: engine down
is P0, latency P1, queue growth and saturation P2. A metric an engine renamed
is matched under both names (``new or old``), so an upgrade does not silently
empty an alert.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from importlib import resources

import yaml
from pydantic import TypeAdapter

from inferwatch.settings import ENGINE_PACKS, RuleSpec

__all__ = ["ENGINE_PACKS", "engine_rule_specs"]


@cache
def _pack_specs(name: str) -> tuple[RuleSpec, ...]:
    if name not in ENGINE_PACKS:
        raise ValueError(f"unknown rule pack {name!r}: choose from {', '.join(ENGINE_PACKS)}")
    text = resources.files("inferwatch.rules").joinpath("packs", f"{name}.yaml").read_text("utf-8")
    return tuple(TypeAdapter(list[RuleSpec]).validate_python(yaml.safe_load(text)))


def engine_rule_specs(packs: Iterable[str]) -> tuple[RuleSpec, ...]:
    """The rule configs of the named engine packs, in order, validated like a user's."""
    return tuple(s for name in dict.fromkeys(packs) for s in _pack_specs(name))
