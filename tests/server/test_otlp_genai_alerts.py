"""Evaluations sent as OTLP (``gen_ai.evaluation.score``) page as the SDK's ``record_score`` does.

The SDK's replay story (``tests/replay/generation_quality.yaml``: a model swap moves the judge
score from 0.85 to 0.6; a healthy swap; too little evidence) is sent again as the OTLP exports an
instrumented app would make every 10 minutes (cumulative histograms, one stream per model),
through the receiver's decoder and translation, and replayed with the default
``GenerationQualityDrop``: the same alert timeline as from the SDK's series.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from inferwatch.config import load_config
from inferwatch.model import Labels
from inferwatch.rules import _testfile as replay_file
from inferwatch.rules import load_rules
from inferwatch.rules._replay import run_replay
from inferwatch.rules._testfile import InputSeries, load_test_file
from inferwatch.server.ingest._otlp_decode import decode_metrics_json
from inferwatch.server.ingest._otlp_delta import DeltaState
from inferwatch.server.ingest._otlp_translate import translate

REPLAY = Path(__file__).parents[1] / "replay" / "generation_quality.yaml"
SCORE = "inferwatch_generation_score"


def _attr(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def export(step_ns: int, streams: dict[Labels, tuple[float, float]]) -> dict[str, Any]:
    """One OTLP/JSON export at ``step_ns``: a cumulative ``gen_ai.evaluation.score`` point per stream."""
    by_service: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for labels, (count, total) in streams.items():
        by_service[labels["service"]].append({
            "attributes": [_attr("gen_ai.evaluation.name", labels["name"]),
                           _attr("gen_ai.response.model", labels["model"]),
                           _attr("http.route", labels["route"])],
            "startTimeUnixNano": "1", "timeUnixNano": str(step_ns),
            "count": str(round(count)), "sum": total,
            "bucketCounts": [str(round(count))], "explicitBounds": []})
    return {"resourceMetrics": [
        {"resource": {"attributes": [_attr("service.name", service)]},
         "scopeMetrics": [{"metrics": [{"name": "gen_ai.evaluation.score", "unit": "1", "histogram": {
             "aggregationTemporality": 2, "dataPoints": points}}]}]}
        for service, points in by_service.items()]}


def via_otlp(group: replay_file.TestGroup) -> replay_file.TestGroup:
    """``group`` with its SDK score series replaced by what OTLP exports of the same values store."""
    streams: dict[Labels, dict[str, tuple[float | None, ...]]] = defaultdict(dict)
    for s in group.series:
        key = Labels({k: v for k, v in s.labels.items() if k != "__name__"})
        streams[key][s.labels.name.removeprefix(SCORE)] = s.values
    steps = max(len(v) for s in streams.values() for v in s.values())
    stored: dict[Labels, list[float | None]] = defaultdict(lambda: [None] * steps)
    delta = DeltaState()
    for i in range(steps):
        at = {k: (v["_count"][i], v["_sum"][i]) for k, v in streams.items()
              if i < len(v["_count"]) and v["_count"][i] is not None}
        if not at:
            continue
        t_ns = int(i * group.interval * 1e9) + 1_000_000  # OTLP refuses a point at time 0
        doc = export(t_ns, at)  # type: ignore[arg-type]
        result = translate(decode_metrics_json(json.loads(json.dumps(doc))), now=t_ns / 1e9, delta=delta)
        assert result.rejected == 0, result.errors
        for sample in result.samples:
            if sample.labels.name in (SCORE + "_sum", SCORE + "_count"):
                stored[sample.labels][round(sample.t / group.interval)] = sample.v
    series = tuple(InputSeries(labels, tuple(values)) for labels, values in stored.items())
    return replace(group, series=series)


def test_otlp_evaluations_give_the_sdks_quality_alerts() -> None:
    sdk = load_test_file(REPLAY)
    groups = tuple(g for g in sdk.groups
                   if g.series and all(s.labels.name.startswith(SCORE) for s in g.series))
    assert len(groups) == 3  # the swap that pages, the healthy swap, too little evidence
    rules = [r for r in load_rules(load_config(None)) if r.name == "GenerationQualityDrop"]
    from_sdk = run_replay(replace(sdk, groups=groups), rules)
    from_otlp = run_replay(replace(sdk, groups=tuple(via_otlp(g) for g in groups)), rules)
    assert from_sdk.failures == [] and from_otlp.failures == []
    assert from_otlp.timeline == from_sdk.timeline
    firing = [e for e in from_otlp.timeline if e.get("state") == "firing"]
    assert len(firing) == 1 and firing[0]["t"] <= 26 * 3600, from_otlp.timeline
