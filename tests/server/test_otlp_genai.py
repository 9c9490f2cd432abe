"""OpenTelemetry GenAI metrics (OpenLIT- and OpenLLMetry-shaped) land as the SDK's generation series.

Unit tests of the mapping on the recorded fixtures (``fixtures/make_genai_otlp.py``
wrote them with the real OpenTelemetry SDK), against what the SDK itself exposes
for the same three completions.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest

from inferwatch.model import Sample
from inferwatch.sdk import Monitor
from inferwatch.server.ingest._otlp_decode import decode_metrics_json
from inferwatch.server.ingest._otlp_delta import DeltaState
from inferwatch.server.ingest._otlp_genai import genai_samples
from inferwatch.server.ingest._otlp_translate import translate

FIXTURES = Path(__file__).parent / "fixtures"
CALLS = [(120, 40, 0.3, 1.5), (80, 20, 0.2, 0.8), (200, 60, 0.5, 2.9)]  # as make_genai_otlp.py
MODEL = "gpt-4o-mini-2024-07-18"
# OpenLLMetry sends no time per output token: the SDK's series it can match
OPENLLMETRY = {"inferwatch_generation_time_to_first_token_seconds", "inferwatch_generation_duration_seconds",
               "inferwatch_generation_requests_total", "inferwatch_generation_input_tokens_total",
               "inferwatch_generation_output_tokens_total", "inferwatch_generation_request_input_tokens",
               "inferwatch_generation_request_output_tokens"}
OPENLIT = OPENLLMETRY | {"inferwatch_generation_time_per_output_token_seconds"}


def load(name: str) -> dict[str, Any]:
    """A recorded OTLP/JSON export (``otlp_genai_openlit`` or ``otlp_genai_openllmetry``)."""
    return dict(json.loads((FIXTURES / f"{name}.json").read_text()))


def restamp(doc: dict[str, Any], end_ns: int, service: str) -> dict[str, Any]:
    """``doc`` with every point shifted to end at ``end_ns`` and its ``service.name`` replaced."""
    doc = copy.deepcopy(doc)
    points = [p for rm in doc["resourceMetrics"] for sm in rm["scopeMetrics"] for m in sm["metrics"]
              for kind in ("histogram", "sum", "gauge") for p in m.get(kind, {}).get("dataPoints", [])]
    shift = end_ns - max(int(p["timeUnixNano"]) for p in points)
    for p in points:
        for key in ("startTimeUnixNano", "timeUnixNano"):
            p[key] = str(int(p[key]) + shift)
    for rm in doc["resourceMetrics"]:
        for a in rm["resource"]["attributes"]:
            if a["key"] == "service.name":
                a["value"] = {"stringValue": service}
    return doc


def bridged(name: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """The SDK-named samples the fixture translates to: (name, labels without job/instance) -> value."""
    resources = decode_metrics_json(load(name))
    now = max(p.time_ns for r in resources for m in r.metrics for p in m.points) / 1e9
    result = translate(resources, now=now, delta=DeltaState())
    assert result.rejected == 0, result.errors
    return _by_series(s for s in result.samples if s.labels.name.startswith("inferwatch_generation_"))


def _by_series(samples: Any) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    skip = ("__name__", "job", "instance")
    return {(s.labels.name, frozenset((k, v) for k, v in s.labels.items() if k not in skip and v)): s.v
            for s in samples}


def sdk_series(families: set[str]) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """What the SDK exposes for the same three completions (route ``chat``: the operation's name)."""
    monitor = Monitor("chat-app", model=MODEL)
    for n_in, n_out, ttft, duration in CALLS:
        monitor.record_generation("chat", 200, ttft, duration, n_in, n_out)
    assert monitor.flush()
    out = {}
    for family in monitor.registry.collect():
        for s in family.samples:
            base = s.name.removesuffix("_bucket").removesuffix("_sum").removesuffix("_count")
            if base in families or s.name in families:
                out[(s.name, frozenset((k, v) for k, v in s.labels.items() if v))] = float(s.value)
    return out


@pytest.mark.parametrize(("fixture", "families"), [("otlp_genai_openlit", OPENLIT),
                                                   ("otlp_genai_openllmetry", OPENLLMETRY)])
def test_a_recorded_export_gives_the_sdks_series_and_values(fixture: str, families: set[str]) -> None:
    got, want = bridged(fixture), sdk_series(families)
    got = {k: v for k, v in got.items() if k[0] != "inferwatch_generation_cost_total"}  # OpenLIT's prices
    assert set(want) <= set(got)
    # the conventions' token buckets go on to 67,108,864; the SDK's stop at 1,048,576
    extra = {(name, dict(labels)["le"]) for name, labels in set(got) - set(want)}
    assert {name for name, _ in extra} <= {"inferwatch_generation_request_input_tokens_bucket",
                                           "inferwatch_generation_request_output_tokens_bucket"}
    assert all(float(le) > 1048576 for _, le in extra)
    for key, value in want.items():
        assert math.isclose(got[key], value, rel_tol=1e-9, abs_tol=1e-9), key


def test_the_instrumentations_attributes_stay_on_the_translated_series_only() -> None:
    resources = decode_metrics_json(load("otlp_genai_openlit"))
    now = max(p.time_ns for r in resources for m in r.metrics for p in m.points) / 1e9
    samples = translate(resources, now=now, delta=DeltaState()).samples
    names = {s.labels.name for s in samples}
    assert "gen_ai_client_token_usage_bucket" in names  # the Prometheus translation is kept
    assert "gen_ai_usage_cost_USD_sum" in names
    usage = next(s for s in samples if s.labels.name == "gen_ai_client_token_usage_sum")
    assert usage.labels["gen_ai_provider_name"] == "openai" and usage.labels["gen_ai_system"] == "openai"
    generation = next(s for s in samples if s.labels.name == "inferwatch_generation_input_tokens_total")
    assert set(generation.labels) == {"__name__", "service", "model", "route", "job", "instance"}
    # OpenLIT's cost: the spend counter the tenant-budget rules read (USD, no route, tenant default)
    cost = next(s for s in samples if s.labels.name == "inferwatch_generation_cost_total")
    total = next(s for s in samples if s.labels.name == "gen_ai_usage_cost_USD_sum")
    assert cost.v == total.v > 0 and (cost.labels["currency"], cost.labels["tenant"]) == ("USD", "default")
    assert "route" not in cost.labels


def _written(name: str, t: float = 10.0) -> list[Sample]:
    from inferwatch.model import Labels
    return [Sample(Labels({"__name__": f"{name}_sum"}), t, 4.5),
            Sample(Labels({"__name__": f"{name}_count"}), t, 6),
            Sample(Labels({"__name__": f"{name}_bucket", "le": "+Inf"}), t, 6)]


def hist(name: str, *more: str) -> set[str]:
    """A histogram's three names, and ``more``."""
    return {f"inferwatch_generation_{name}_{suffix}" for suffix in ("sum", "count", "bucket")} | {
        f"inferwatch_generation_{m}" for m in more}


# (metric, attributes, the names written, a label the copy carries) — one row per mapping rule
CASES = [
    # the request model when no response model; an error.type makes the count code 500
    ("gen_ai.client.operation.duration", {"gen_ai.request.model": "m", "error.type": "timeout"},
     hist("duration_seconds", "requests_total"), ("code", "500")),
    # http.route wins over the operation name
    ("gen_ai.server.request.duration", {"http.route": "/v1/chat", "gen_ai.operation.name": "chat"},
     hist("duration_seconds", "requests_total"), ("route", "/v1/chat")),
    # the older token type values prompt / completion
    ("gen_ai.client.token.usage", {"gen_ai.token.type": "completion"},
     hist("request_output_tokens", "output_tokens_total"), ("service", "svc")),
    # evaluations: the name from gen_ai.evaluation.name
    ("gen_ai.evaluation.score", {"gen_ai.evaluation.name": "relevance", "gen_ai.response.model": "m"},
     hist("score"), ("name", "relevance")),
    # OpenLIT's cost: its sum is the SDK's spend counter, by tenant (tenant.id), in USD
    ("gen_ai.usage.cost", {"tenant.id": "acme", "gen_ai.request.model": "m"},
     {"inferwatch_generation_cost_total"}, ("tenant", "acme")),
    # OpenLLMetry's newer time-to-first-token name
    ("gen_ai.chat_completions.streaming_time_to_first_token", {},
     hist("time_to_first_token_seconds"), ("service", "svc")),
]


@pytest.mark.parametrize(("metric", "attributes", "names", "label"), CASES)
def test_mapping(metric: str, attributes: dict[str, str], names: set[str], label: tuple[str, str]) -> None:
    out = genai_samples(metric, _written("x"), attributes, {"service.name": "svc"})
    assert {s.labels.name for s in out} == names
    assert any(dict(s.labels.items()).get(label[0]) == label[1] for s in out)
    assert all(s.labels["service"] == "svc" and s.t == 10.0 for s in out)


@pytest.mark.parametrize(("metric", "attributes"), [
    ("gen_ai.client.token.usage", {}),  # no token type: nothing to count it as
    ("gen_ai.client.token.usage", {"gen_ai.token.type": "total"}),
    ("http.server.request.duration", {}),  # not a GenAI histogram
])
def test_points_it_cannot_place_are_not_copied(metric: str, attributes: dict[str, str]) -> None:
    assert genai_samples(metric, _written("x"), attributes, {"service.name": "svc"}) == []
