"""Reload builds the new generation completely, then swaps; removed targets go stale."""

from __future__ import annotations

import pytest

from inferwatch import ConfigError
from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock
from inferwatch.server import Server, ServerComponents, build_components
from inferwatch.store import MemoryStore, parse_selector, stale_mask

from .conftest import FakeTarget


def test_reload_swaps_targets_and_marks_removed_series_stale(target: FakeTarget) -> None:
    clock = SimulatedClock(100.0)
    store = MemoryStore()
    old_cfg, new_cfg = (
        parse_config(f"storage: {{type: memory}}\nscrape: {{targets: [{{job: {job}, url: '{target.url}'}}]}}")
        for job in ("old", "new")
    )
    server = Server(build_components(old_cfg, clock=clock, store=store), clock=clock)
    target.body = "a 1\n"
    server.components.scrape.tick(100.0)
    clock.set(110.0)
    server.reload(lambda: build_components(new_cfg, clock=clock, store=store))
    assert [t.job for t in server.components.scrape.targets()] == ["new"]
    (old_a,) = store.select(parse_selector('a{job="old"}'), 0, 1e9)
    assert old_a.t.tolist() == [100.0, 110.0] and stale_mask(old_a.v).tolist() == [False, True]
    server.stop()


def test_a_failing_build_leaves_the_old_generation_running(target: FakeTarget) -> None:
    clock = SimulatedClock(100.0)
    cfg = parse_config(f"storage: {{type: memory}}\nscrape: {{targets: [{{job: old, url: '{target.url}'}}]}}")
    server = Server(build_components(cfg, clock=clock), clock=clock)
    before = server.components

    def broken() -> ServerComponents:
        raise ConfigError("rules[0].threshold: not a number")

    with pytest.raises(ConfigError):
        server.reload(broken)
    assert server.components is before
    server.stop()
