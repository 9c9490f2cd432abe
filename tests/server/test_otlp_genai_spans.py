"""GenAI spans in: finish reasons count as the SDK's flags, evaluation events as its scores.

The spans are OTLP/JSON as the instrumentations send them (OpenLIT: ``gen_ai.response.finish_reasons``
as an array, the v1.37 attributes; OpenLLMetry: ``gen_ai.system``, ``llm.request.type`` and a
finish reason per choice), decoded by the trace receiver's decoder and counted by ``GenAiSpans``
into a store; the same three generations recorded through the SDK give the same series and values.
"""

from __future__ import annotations

from typing import Any

import pytest

from inferwatch.model import SimulatedClock, parse_matcher
from inferwatch.sdk import Monitor
from inferwatch.server.ingest import GenAiSpans
from inferwatch.server.ingest._otlp_genai_spans import MAX_SERIES
from inferwatch.store import MemoryStore
from inferwatch.tracing import decode_json

T0 = 1_790_000_000 * 10**9


def _value(v: Any) -> dict[str, Any]:
    if isinstance(v, list):
        return {"arrayValue": {"values": [_value(x) for x in v]}}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}  # 64-bit integers are strings in OTLP/JSON
    return {"stringValue": v}


def _attrs(d: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _value(v)} for k, v in d.items()]


def body(spans: list[tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]], service: str = "chat",
         t0: int = T0) -> Any:
    """One export of ``spans`` (attributes, [(event name, event attributes)]) from ``service`` at ``t0``."""
    return {"resourceSpans": [{"resource": {"attributes": _attrs({"service.name": service})},
                               "scopeSpans": [{"spans": [
        {"traceId": f"{i + 1:032x}", "spanId": f"{i + 1:016x}", "name": "chat llama-3-8b", "kind": 3,
         "startTimeUnixNano": str(t0), "endTimeUnixNano": str(t0 + 10**9), "attributes": _attrs(a),
         "events": [{"name": n, "timeUnixNano": str(t0 + 2 * 10**9), "attributes": _attrs(ea)}
                    for n, ea in ev]}
        for i, (a, ev) in enumerate(spans)]}]}]}


def _eval(name: str, score: float) -> tuple[str, dict[str, Any]]:
    return "gen_ai.evaluation.result", {"gen_ai.evaluation.name": name,
                                        "gen_ai.evaluation.score.value": score}


LIT = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
       "gen_ai.request.model": "llama-3-8b", "tenant.id": "acme"}
OPENLIT = body([
    ({**LIT, "gen_ai.response.model": "llama-3-8b", "gen_ai.response.finish_reasons": ["length"]},
     [_eval("relevance", 0.75)]),
    ({**LIT, "gen_ai.response.finish_reasons": ["content_filter"]},
     [_eval("relevance", 0.25), ("exception", {"exception.type": "ValueError"})]),
    ({**LIT, "gen_ai.response.finish_reasons": ["stop"]}, [_eval("relevance", 4)]),
])
LLM = {"gen_ai.system": "openai", "llm.request.type": "chat", "gen_ai.request.model": "llama-3-8b",
       "tenant.id": "acme"}
OPENLLMETRY = body([
    ({**LLM, "gen_ai.completion.0.finish_reason": "length"}, [_eval("relevance", 0.75)]),
    ({**LLM, "gen_ai.completion.0.finish_reason": "content_filter"}, [_eval("relevance", 0.25)]),
    ({**LLM, "gen_ai.completion.0.finish_reason": "stop"}, [_eval("relevance", 4)]),
])


def from_spans(doc: Any) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """The series GenAiSpans writes for ``doc``: (name, labels) -> value."""
    store, clock = MemoryStore(), SimulatedClock(T0 / 1e9 + 5)
    assert GenAiSpans(store, clock).observe(decode_json(doc)) > 0
    return _all(store, clock.now())


def _all(store: MemoryStore, t: float) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every series' last value in ``store`` up to ``t``: (name, labels) -> value."""
    return {(s.labels.name, frozenset((k, v) for k, v in s.labels.items() if k != "__name__")): float(s.v[-1])
            for s in store.select([parse_matcher('__name__=~".+"')], t - 60, t + 60)}


def from_sdk() -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """The same generations through the SDK: route ``chat``, tenant ``acme``, flags and a relevance score."""
    monitor = Monitor(service="chat", clock=SimulatedClock(0.0))
    for gid, flag, score in (("a", ("truncated", ""), 0.75), ("b", ("guardrail", "content_filter"), 0.25),
                             ("c", None, 4)):
        with monitor.track_generation(route="chat", model="llama-3-8b", tenant="acme",
                                      generation_id=gid) as g:
            if flag:
                g.flag(*flag)
        monitor.record_score("relevance", score, generation_id=gid)
    monitor.close()
    out = {}
    for family in monitor.registry.collect():
        for s in family.samples:
            if s.name.startswith(("inferwatch_generation_flags", "inferwatch_generation_score")) \
                    and not s.name.endswith("_created"):
                labels = {k: v for k, v in s.labels.items() if v and k not in ("version",)}
                out[(s.name, frozenset(labels.items()))] = s.value
    return out


@pytest.mark.parametrize("doc", [OPENLIT, OPENLLMETRY], ids=["openlit", "openllmetry"])
def test_spans_give_the_sdks_flag_and_score_series(doc: Any) -> None:
    got, want = from_spans(doc), from_sdk()
    assert got == want
    labels = {"service": "chat", "model": "llama-3-8b", "route": "chat", "tenant": "acme",
              "name": "relevance"}
    assert want[("inferwatch_generation_score_count", frozenset(labels.items()))] == 3


def test_counts_go_on_across_requests_and_other_spans_count_nothing() -> None:
    store, clock = MemoryStore(), SimulatedClock(T0 / 1e9 + 5)
    spans = GenAiSpans(store, clock)
    plain = body([({"http.route": "/predict"}, [_eval("relevance", 0.5)])])  # not a GenAI span
    assert spans.observe(decode_json(plain)) == 0
    for _ in range(2):
        spans.observe(decode_json(OPENLIT))  # the same clock reading twice: written one step apart
    got = _all(store, clock.now() + 1)
    count = [v for (name, _), v in got.items() if name == "inferwatch_generation_score_count"]
    assert count == [6.0]
    flags = sorted(v for (name, _), v in got.items() if name == "inferwatch_generation_flags_total")
    assert flags == [2.0, 2.0]


def test_label_sets_are_bounded() -> None:
    assert GenAiSpans(MemoryStore(), SimulatedClock(0.0)).max_series == MAX_SERIES == 10_000
    spans = GenAiSpans(MemoryStore(), SimulatedClock(T0 / 1e9 + 5), max_series=20)
    many = [({"gen_ai.operation.name": "chat", "gen_ai.request.model": f"m{i}",
              "gen_ai.response.finish_reasons": ["length"]}, []) for i in range(25)]
    spans.observe(decode_json(body(many)))
    assert len(spans.flags) == 20
