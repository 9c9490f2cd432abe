"""``inferwatch rules list`` and the evaluator's band status: which rules are dynamic, which learned."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from inferwatch.cli import main
from inferwatch.config import load_config
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.server import build_components


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "inferwatch.yml"
    path.write_text(f"""
server: {{data_dir: '{tmp_path / "data"}'}}
baseline: {{seasonal: {{min_points: 8}}}}
rules:
  default_pack: false
  rules:
    - {{name: Unusual, dimension: service, tier: P1, threshold: dynamic,
       signal: {{type: metric, metric: latency}}, dynamic: {{min_history: 1h}}}}
    - {{name: Down, dimension: service, tier: P0, signal: up, threshold: 1, comparison: "<"}}
""")
    return path


def _listed(capsys: pytest.CaptureFixture[str], cfg: Path) -> dict[str, dict]:
    assert main(["rules", "list", "--config", str(cfg), "--json"]) == 0
    return {r["name"]: r for r in json.loads(capsys.readouterr().out)}


@pytest.mark.slow
def test_rules_list_says_dynamic_and_learned_from_the_saved_state(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], daily: Callable[..., tuple]) -> None:
    # rule: before any state, a dynamic rule lists no series; after the server learned
    # (and saved) a series for longer than min_history it is listed as learned; a static
    # rule has no bands
    cfg = _config(tmp_path)
    rows = _listed(capsys, cfg)
    assert rows["Unusual"]["dynamic"] is True and rows["Unusual"]["bands"] == []
    assert rows["Down"]["dynamic"] is False and "bands" not in rows["Down"]

    t, v = daily(1)
    clock = SimulatedClock(float(t[0]))
    comps = build_components(load_config(cfg), clock=clock)
    series = Labels({"__name__": "latency", "job": "api"})
    try:
        for i, (ti, vi) in enumerate(zip(t[:30], v[:30], strict=True)):  # past 1 h and min_points
            comps.store.append([Sample(series, float(ti), float(vi))])
            comps.evaluator.evaluate(float(ti))
            if i == 4:  # warming up: the samples and time seen against those needed
                assert comps.evaluator.band_status("Unusual") == {'{job="api"}': False}
                w = comps.evaluator.band_warmup("Unusual")['{job="api"}']
                assert w["points"] == 5 and w["points"] < w["min_points"]
        assert comps.evaluator.band_status("Unusual") == {'{job="api"}': True}
        assert comps.evaluator.band_warmup("Down") == {}
        assert comps.evaluator.band_status("Down") is None
    finally:
        comps.close()
    rows = _listed(capsys, cfg)
    (band,) = rows["Unusual"]["bands"]
    assert band["series"] == '{job="api"}' and band["learned"] is True
    assert band["warmup"]["points"] == 30 and band["warmup"]["points"] >= band["warmup"]["min_points"]
    assert main(["rules", "list", "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert 'band {job="api"}: learned (30/' in out and "Down" in out and " static " in out
