"""OpenTelemetry GenAI metrics → the SDK's generation series, so the default generation rules watch them.

An app instrumented with OpenLIT, OpenLLMetry (Traceloop) or the OpenTelemetry
GenAI instrumentations sends the GenAI semantic conventions' metrics
(semantic conventions v1.37, ``docs/gen-ai/gen-ai-metrics.md``). Besides their
Prometheus translation (``gen_ai_client_token_usage_bucket`` ...), each point
is written again under the name ``monitor.track_generation`` writes, with the
SDK's labels and nothing else (the instrumentation's other attributes stay on
the translated series):

==========================================  ==================================================
OpenTelemetry metric (unit)                 inferwatch series
==========================================  ==================================================
gen_ai.server.time_to_first_token (s)       inferwatch_generation_time_to_first_token_seconds
gen_ai.server.time_per_output_token (s)     inferwatch_generation_time_per_output_token_seconds
gen_ai.server.request.duration (s),         inferwatch_generation_duration_seconds, and its
gen_ai.client.operation.duration (s)        count as inferwatch_generation_requests_total{code}
gen_ai.client.token.usage ({token}),        inferwatch_generation_request_{input,output}_tokens,
by gen_ai.token.type                        its sum as inferwatch_generation_{input,output}_tokens_total
gen_ai.evaluation.score (1),                inferwatch_generation_score{name}
by gen_ai.evaluation.name
gen_ai.usage.cost (USD, OpenLIT's)          its sum as inferwatch_generation_cost_total{tenant,currency="USD"}
==========================================  ==================================================

OpenLLMetry's own time-to-first-token histograms
(``llm.openai.chat_completions.streaming_time_to_first_token``, later
``gen_ai.chat_completions.streaming_time_to_first_token``) count as
``gen_ai.server.time_to_first_token``.

Labels: ``service`` = resource ``service.name``; ``model`` =
``gen_ai.response.model``, else ``gen_ai.request.model``; ``route`` =
``http.route`` when the point has one, else ``gen_ai.operation.name`` (``chat``,
``embeddings`` ...); ``code`` = ``500`` when the point carries ``error.type``,
else ``200``; ``name`` = ``gen_ai.evaluation.name``. The conventions name the
evaluation only as an event (``gen_ai.evaluation.result`` with
``gen_ai.evaluation.name`` and ``gen_ai.evaluation.score.value``), not as a
metric: ``gen_ai.evaluation.score`` is the histogram inferwatch reads for it
(record the event's score on it). The provider (``gen_ai.provider.name``, the
older ``gen_ai.system``) stays on the translated series only: the SDK's series
have no provider label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from inferwatch.model import Labels, Sample

__all__ = ["GENAI_METRICS", "genai_samples"]


@dataclass(frozen=True)
class _Target:
    histogram: str  # the SDK's histogram name, by token type when ``by_token_type``
    count_as: str = ""  # the SDK counter the histogram's ``_count`` also is (with ``code``)
    sum_as: str = ""  # the SDK counter the histogram's ``_sum`` also is
    by_token_type: bool = False
    evaluation: bool = False
    cost: bool = False  # OpenLIT's cost histogram: its _sum is the SDK's spend counter only


_TTFT = _Target("inferwatch_generation_time_to_first_token_seconds")
_DURATION = _Target("inferwatch_generation_duration_seconds", count_as="inferwatch_generation_requests_total")
GENAI_METRICS: Mapping[str, _Target] = {
    "gen_ai.server.time_to_first_token": _TTFT,
    "llm.openai.chat_completions.streaming_time_to_first_token": _TTFT,
    "gen_ai.chat_completions.streaming_time_to_first_token": _TTFT,
    "gen_ai.server.time_per_output_token": _Target("inferwatch_generation_time_per_output_token_seconds"),
    "gen_ai.server.request.duration": _DURATION,
    "gen_ai.client.operation.duration": _DURATION,
    "gen_ai.client.token.usage": _Target("inferwatch_generation_request_{}_tokens",
                                         sum_as="inferwatch_generation_{}_tokens_total", by_token_type=True),
    "gen_ai.evaluation.score": _Target("inferwatch_generation_score", evaluation=True),
    "gen_ai.usage.cost": _Target("", sum_as="inferwatch_generation_cost_total", cost=True),
}
"""The OpenTelemetry GenAI histograms written again under the SDK's names (see the module docstring)."""

_TOKEN_TYPES = {"input": "input", "output": "output", "prompt": "input", "completion": "output"}


def genai_samples(metric: str, written: Sequence[Sample], attributes: Mapping[str, str],
                  resource: Mapping[str, str]) -> list[Sample]:
    """The SDK-named copies of one histogram point's samples (``written``: its ``_sum/_count/_bucket``).

    Empty when ``metric`` is not a GenAI histogram read here, or a token-usage
    point has no (or another) ``gen_ai.token.type``.
    """
    target = GENAI_METRICS.get(metric)
    if target is None or not written:
        return []
    if target.cost:  # spend by tenant, as the SDK counts it (OpenLIT prices in USD): no route
        labels = {**_labels(attributes, resource, evaluation=False), "currency": "USD",
                  "tenant": attributes.get("tenant.id") or "default"}
        labels.pop("route", None)
        return [_sample(target.sum_as, labels, s) for s in written if s.labels.name.endswith("_sum")]
    histogram, sum_as = target.histogram, target.sum_as
    if target.by_token_type:
        kind = _TOKEN_TYPES.get(attributes.get("gen_ai.token.type", ""))
        if kind is None:
            return []
        histogram, sum_as = histogram.format(kind), sum_as.format(kind)
    labels = _labels(attributes, resource, evaluation=target.evaluation)
    base = written[0].labels.name.rsplit("_", 1)[0]
    out = []
    for s in written:
        suffix = s.labels.name[len(base):]
        extra = {"le": _le(s.labels["le"])} if suffix == "_bucket" else {}
        out.append(_sample(histogram + suffix, {**labels, **extra}, s))
        if suffix == "_count" and target.count_as:
            code = "500" if attributes.get("error.type") else "200"
            out.append(_sample(target.count_as, {**labels, "code": code}, s))
        if suffix == "_sum" and sum_as:
            out.append(_sample(sum_as, labels, s))
    return out


def _labels(attributes: Mapping[str, str], resource: Mapping[str, str], *,
            evaluation: bool) -> dict[str, str]:
    model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model", "")
    route = attributes.get("http.route") or attributes.get("gen_ai.operation.name", "")
    out = {"service": resource.get("service.name", ""), "model": model, "route": route}
    if evaluation:
        out["name"] = attributes.get("gen_ai.evaluation.name", "")
    job = resource.get("service.name")
    if job is not None:
        ns = resource.get("service.namespace")
        out["job"] = f"{ns}/{job}" if ns else job
    if "service.instance.id" in resource:
        out["instance"] = resource["service.instance.id"]
    return {k: v for k, v in out.items() if v}


def _le(bound: str) -> str:
    """The bound as the SDK (and Python clients) print it, ``4.0`` not ``4``: the same series when scraped."""
    return bound if bound == "+Inf" else repr(float(bound))


def _sample(name: str, labels: Mapping[str, str], s: Sample) -> Sample:
    return Sample(Labels({**labels, "__name__": name}), s.t, s.v)
