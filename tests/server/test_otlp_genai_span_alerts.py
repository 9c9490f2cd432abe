"""Refusals sent as GenAI spans page as the SDK's ``g.flag("refused")`` does.

The SDK's replay story for ``GenerationRefusalSpike`` (``tests/replay/generation_quality.yaml``:
1 % of 600 generations a step refused for a day, 20 % from 25h; the same traffic healthy) is sent
again as an instrumented app sends it every 10 minutes: one span per generation, flagged as the
library flags it, through the trace decoder and ``GenAiSpans`` (what ``POST /v1/traces`` does),
and the generations' count as the ``gen_ai.client.operation.duration`` histogram both libraries
export beside their spans, through the metrics translation (``POST /v1/metrics``). Half the
flagged generations are refusals, half content-filter hits (guardrail): OpenLIT sets
``gen_ai.response.finish_reasons`` (Anthropic's ``refusal``, OpenAI's ``content_filter``);
OpenLLMetry sets ``gen_ai.completion.0.finish_reason`` and, for OpenAI's refusals, the refusal's
text as ``gen_ai.completion.0.refusal`` with the finish reason ``stop``. Replayed with the default
rule, the series give the SDK's alert timeline: one firing in the spike, none when healthy.

Neither library puts ``http.route`` on the span, so the route is ``gen_ai.operation.name``
(``chat``): the SDK's timeline is compared with its route read as ``chat``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from inferwatch.config import load_config
from inferwatch.model import Labels, SimulatedClock, parse_matcher
from inferwatch.rules import _testfile as replay_file
from inferwatch.rules import load_rules
from inferwatch.rules._replay import run_replay
from inferwatch.rules._testfile import InputSeries, load_test_file
from inferwatch.server.ingest import GenAiSpans
from inferwatch.server.ingest._otlp_decode import decode_metrics_json
from inferwatch.server.ingest._otlp_delta import DeltaState
from inferwatch.server.ingest._otlp_translate import translate
from inferwatch.store import MemoryStore
from inferwatch.tracing import decode_json

REPLAY = Path(__file__).parents[1] / "replay" / "generation_quality.yaml"
REQUESTS, FLAGS = "inferwatch_generation_requests_total", "inferwatch_generation_flags_total"
ROUTE = "chat"  # gen_ai.operation.name: neither library sets http.route on the span
T0 = 2_983_334 * 600.0  # the replay's 0 as the server's clock (2026-09-21): the store refuses 1970


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, list):
        return {"key": key, "value": {"arrayValue": {"values": [{"stringValue": v} for v in value]}}}
    return {"key": key, "value": {"stringValue": value}}


LIT = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
       "gen_ai.request.model": "llama-3-8b", "gen_ai.response.model": "llama-3-8b"}
LLM = {"gen_ai.system": "openai", "llm.request.type": "chat", "gen_ai.request.model": "llama-3-8b",
       "gen_ai.response.model": "llama-3-8b"}
SHAPES: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    # (a generation answered, refused, stopped by the content filter), as each library sets them
    "openlit": ({**LIT, "gen_ai.response.finish_reasons": ["end_turn"]},
                {**LIT, "gen_ai.response.finish_reasons": ["refusal"]},
                {**LIT, "gen_ai.response.finish_reasons": ["content_filter"]}),
    "openllmetry": ({**LLM, "gen_ai.completion.0.finish_reason": "stop",
                     "gen_ai.completion.0.content": "Paris."},
                    {**LLM, "gen_ai.completion.0.finish_reason": "stop",
                     "gen_ai.completion.0.refusal": "I'm sorry, I can't help with that."},
                    {**LLM, "gen_ai.completion.0.finish_reason": "content_filter",
                     "gen_ai.completion.0.content": "FILTERED"}),
}

METRIC_ATTRS = {  # on the duration histogram's points (OpenLLMetry's metric_shared_attributes)
    "openlit": {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
                "gen_ai.request.model": "llama-3-8b", "gen_ai.response.model": "llama-3-8b"},
    "openllmetry": {"gen_ai.system": "openai", "gen_ai.response.model": "llama-3-8b",
                    "gen_ai.operation.name": "chat", "server.address": "api.openai.com", "stream": "False"},
}


@cache
def spans(shape: str, generations: int, flagged: int) -> list[Any]:
    """One export's decoded spans: ``generations`` of them, ``flagged`` refused or filtered (alternately)."""
    ok, refused, filtered = SHAPES[shape]
    attrs = [refused if i % 2 == 0 else filtered for i in range(flagged)] + [ok] * (generations - flagged)
    doc = {"resourceSpans": [{"resource": {"attributes": [_attr("service.name", "chat")]},
                              "scopeSpans": [{"spans": [
        {"traceId": f"{i + 1:032x}", "spanId": f"{i + 1:016x}", "name": "chat llama-3-8b", "kind": 3,
         "startTimeUnixNano": "1", "endTimeUnixNano": "2", "attributes": [_attr(k, v) for k, v in a.items()]}
        for i, a in enumerate(attrs)]}]}]}
    return decode_json(json.loads(json.dumps(doc)))


def duration_export(shape: str, t_ns: int, count: int) -> dict[str, Any]:
    """The cumulative ``gen_ai.client.operation.duration`` export of ``count`` generations at ``t_ns``."""
    point = {"attributes": [_attr(k, v) for k, v in METRIC_ATTRS[shape].items()], "startTimeUnixNano": "1",
             "timeUnixNano": str(t_ns), "count": str(count), "sum": 1.5 * count,
             "bucketCounts": [str(count)], "explicitBounds": []}
    return {"resourceMetrics": [{"resource": {"attributes": [_attr("service.name", "chat")]},
                                 "scopeMetrics": [{"metrics": [{"name": "gen_ai.client.operation.duration",
                                                                "unit": "s", "histogram": {
        "aggregationTemporality": 2, "dataPoints": [point]}}]}]}]}


def _steps(values: tuple[float | None, ...]) -> list[int]:
    """What a cumulative SDK series added at each step (0 at its first point)."""
    out, last = [], 0.0
    for v in values:
        out.append(0 if v is None else round(v - last))
        last = last if v is None else v
    return out


def via_spans(group: replay_file.TestGroup, shape: str) -> replay_file.TestGroup:
    """``group``'s generations sent as ``shape``'s spans and duration exports: the series stored."""
    (requests,) = [s for s in group.series if s.labels.name == REQUESTS]
    (flagged,) = [s for s in group.series if s.labels.name == FLAGS]
    per_step = list(zip(_steps(requests.values), _steps(flagged.values), strict=True))
    store, clock, delta = MemoryStore(), SimulatedClock(0.0), DeltaState()
    counter = GenAiSpans(store, clock)
    stored: dict[Labels, list[float | None]] = defaultdict(lambda: [None] * len(per_step))
    total = 0
    for i, (generations, refused) in enumerate(per_step):
        if not generations:
            continue  # no generation: no span and no point (an instrument unused exports nothing)
        t = T0 + i * group.interval
        clock.set(t)
        assert counter.observe(spans(shape, generations, refused)) > 0
        total += generations
        export = decode_metrics_json(duration_export(shape, int(t * 1e9), total))
        result = translate(export, now=t, delta=delta)
        assert result.rejected == 0, result.errors
        for sample in result.samples:
            if sample.labels.name == REQUESTS:
                stored[sample.labels][round((sample.t - T0) / group.interval)] = sample.v
    for s in store.select([parse_matcher(f'__name__="{FLAGS}"')], T0, T0 + len(per_step) * group.interval):
        for t, v in zip(s.t, s.v, strict=True):
            stored[s.labels][round((t - T0) / group.interval)] = float(v)
    assert {k.get("flag") for k in stored if k.name == FLAGS} == {"refused", "guardrail"}
    return replace(group, series=tuple(InputSeries(k, tuple(v)) for k, v in stored.items()))


def _as_route(timeline: list[dict[str, Any]], route: str) -> str:
    return json.dumps(timeline, sort_keys=True).replace('"/v1/chat/completions"', json.dumps(route))


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_refusal_spans_give_the_sdks_refusal_alerts(shape: str) -> None:
    sdk = load_test_file(REPLAY)
    groups = tuple(g for g in sdk.groups
                   if g.series and {s.labels.name for s in g.series} == {REQUESTS, FLAGS})
    assert len(groups) == 2  # the spike that pages, the healthy service
    rules = [r for r in load_rules(load_config(None)) if r.name == "GenerationRefusalSpike"]
    from_sdk = run_replay(replace(sdk, groups=groups), rules)
    assert from_sdk.failures == []
    spike, healthy = (run_replay(replace(sdk, groups=(via_spans(g, shape),)), rules) for g in groups)
    from_spans = sorted(spike.timeline + healthy.timeline, key=lambda e: e["t"])
    assert _as_route(from_spans, ROUTE) == _as_route(from_sdk.timeline, ROUTE)
    firing = [e for e in spike.timeline if e.get("state") == "firing"]
    assert len(firing) == 1 and firing[0]["t"] <= 26 * 3600, spike.timeline
    assert firing[0]["labels"]["route"] == ROUTE
    assert not [e for e in healthy.timeline if e.get("state") == "firing"], healthy.timeline
