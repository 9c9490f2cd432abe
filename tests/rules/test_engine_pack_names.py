"""Every metric an engine pack's rule reads is in the pack's checked list (packs/checked_metrics.yaml),
which names the engine's source or metric reference and the commit the names were checked against."""

from __future__ import annotations

from importlib import resources
from typing import Any

import pytest
import yaml

from inferwatch.promql import parse_promql
from inferwatch.rules import Rule
from inferwatch.rules._engine_packs import ENGINE_PACKS, engine_rule_specs
from inferwatch.server.api._exemplar_api import selectors

HISTOGRAM_SERIES = ("_bucket", "_sum", "_count")


def _checked() -> dict[str, Any]:
    text = resources.files("inferwatch.rules").joinpath("packs", "checked_metrics.yaml").read_text("utf-8")
    out: dict[str, Any] = yaml.safe_load(text)
    return out


def _read(pack: str) -> set[str]:
    """The metric names the pack's rules select (``up`` aside: the scrape's own)."""
    names = set()
    for spec in engine_rule_specs([pack]):
        for matchers in selectors(parse_promql(Rule.from_spec(spec).promql)):
            names |= {m.value for m in matchers if m.name == "__name__"}
    return names - {"up"}


def _base(name: str, listed: dict[str, str]) -> str:
    """A histogram's series (``x_bucket``) under the histogram's name when that is what is listed."""
    for suffix in HISTOGRAM_SERIES:
        stem = name.removesuffix(suffix)
        if stem != name and listed.get(stem, "").startswith("histogram"):
            return stem
    return name


def test_every_pack_has_a_checked_list_with_its_source_and_commit() -> None:
    checked = _checked()
    assert set(checked) == set(ENGINE_PACKS)
    for pack, entry in checked.items():
        assert entry["upstream"] and len(entry["commit"]) == 40, pack
        assert entry["metrics"], pack


@pytest.mark.parametrize("pack", ENGINE_PACKS)
def test_every_metric_a_pack_reads_was_checked_upstream(pack: str) -> None:
    # rule: a pack rule reading a name nobody checked against the engine fails here, naming it
    listed = {k: str(v) for k, v in _checked()[pack]["metrics"].items()}
    read = {_base(n, listed) for n in _read(pack)}
    assert read, pack
    assert read <= set(listed), sorted(read - set(listed))
    # and the list holds no name the pack no longer reads (it would pass a renamed metric unseen)
    assert set(listed) <= read, sorted(set(listed) - read)
