"""OpenTelemetry GenAI spans → the SDK's quality series: flags from finish reasons, scores from evaluations.

What ``POST /v1/traces`` decoded is stored as traces; a GenAI span (one with
``gen_ai.operation.name``, ``gen_ai.provider.name`` or the older ``gen_ai.system``)
also counts, as ``g.flag(...)`` and ``record_score`` do in the SDK (semantic
conventions v1.37, ``docs/gen-ai/gen-ai-spans.md`` and ``gen-ai-events.md``):

* ``gen_ai.response.finish_reasons`` (OpenLLMetry's ``gen_ai.completion.N.finish_reason``
  too) → ``inferwatch_generation_flags_total{flag, detail}``:
  ``length`` / ``max_tokens`` → ``truncated``; ``content_filter`` and Gemini's
  ``safety``, ``recitation``, ``blocklist``, ``prohibited_content``, ``spii`` →
  ``guardrail`` (detail: the reason); ``refusal`` (Anthropic's stop reason) → ``refused``,
  and so does OpenLLMetry's ``gen_ai.completion.N.refusal`` (OpenAI's ``message.refusal``,
  set instead of the content; its finish reason is ``stop``);
* each ``gen_ai.evaluation.result`` event on the span (``gen_ai.evaluation.name``,
  ``gen_ai.evaluation.score.value``) → one observation of
  ``inferwatch_generation_score{name}``, under the span's labels.

Labels as the GenAI metrics get them (``_otlp_genai``): ``service`` ← resource
``service.name``, ``model`` ← ``gen_ai.response.model`` else ``gen_ai.request.model``,
``route`` ← ``http.route`` else ``gen_ai.operation.name`` (OpenLLMetry's older
``llm.request.type``); ``tenant`` ← the span's
``tenant.id`` (not a convention name: inferwatch's; ``default`` without one). The
counts are the server's since it started (a restart is a counter reset), written at
receipt. Label sets are bounded (``MAX_SERIES``; later ones are dropped and logged),
and a write that fails is logged, never answered as an error: the spans are stored.
"""

from __future__ import annotations

import bisect
import logging
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from inferwatch._exceptions import InputError, StoreError
from inferwatch.model import Clock, Labels, Sample
from inferwatch.model import metrics as catalog
from inferwatch.server.ingest._ingest_checks import check_batch
from inferwatch.store import LimitExceeded, Store
from inferwatch.tracing import SpanRecord

__all__ = ["EVALUATION_EVENT", "FINISH_FLAGS", "GENAI_MARKS", "MAX_SERIES", "GenAiSpans"]

log = logging.getLogger(__name__)

EVALUATION_EVENT = "gen_ai.evaluation.result"
FINISH_FLAGS = {
    "length": "truncated", "max_tokens": "truncated",
    "content_filter": "guardrail", "safety": "guardrail", "recitation": "guardrail", "blocklist": "guardrail",
    "prohibited_content": "guardrail", "spii": "guardrail",
    "refusal": "refused",
}
"""Finish reasons (lower-cased) that flag a generation, and the flag."""
GENAI_MARKS = frozenset({"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.system"})
"""A span with one of these attributes is a GenAI span (``gen_ai.system``: the older conventions)."""
_CHOICE_REASON = re.compile(r"gen_ai\.completion\.\d+\.finish_reason")
_CHOICE_REFUSAL = re.compile(r"gen_ai\.completion\.\d+\.refusal")
MAX_SERIES = 10_000
"""Label sets counted from spans (flags and scores together); later ones are dropped."""


@dataclass
class _Histogram:
    buckets: list[int] = field(default_factory=lambda: [0] * (len(catalog.SCORE_BUCKETS) + 1))
    sum: float = 0.0
    count: int = 0

    def observe(self, value: float) -> None:
        self.buckets[bisect.bisect_left(catalog.SCORE_BUCKETS, value)] += 1
        self.sum += value
        self.count += 1

    def samples(self, labels: dict[str, str], t: float) -> list[Sample]:
        name = catalog.GENERATION_SCORE.name
        out, total = [], 0
        for le, n in zip([*map(repr, catalog.SCORE_BUCKETS), "+Inf"], self.buckets, strict=True):
            total += n
            out.append(Sample(Labels({**labels, "le": le, "__name__": name + "_bucket"}), t, float(total)))
        out.append(Sample(Labels({**labels, "__name__": name + "_sum"}), t, self.sum))
        out.append(Sample(Labels({**labels, "__name__": name + "_count"}), t, float(self.count)))
        return out


@dataclass
class GenAiSpans:
    """Counts flags and evaluation scores from GenAI spans into ``store`` (``observe`` per request)."""

    store: Store
    clock: Clock
    sample_limit: int = 0
    retention: float | None = None
    max_series: int = MAX_SERIES
    flags: dict[Labels, float] = field(default_factory=dict)
    scores: dict[Labels, _Histogram] = field(default_factory=dict)
    _last_t: float = -math.inf
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def observe(self, spans: Sequence[SpanRecord]) -> int:
        """Count what ``spans`` say and write the series they touched; the samples written (0: none)."""
        with self._lock:
            touched_flags: set[Labels] = set()
            touched_scores: set[Labels] = set()
            for span in spans:
                if not GENAI_MARKS.isdisjoint(span.attributes):
                    self._span(span, touched_flags, touched_scores)
            if not touched_flags and not touched_scores:
                return 0
            t = max(self.clock.now(), self._last_t + 0.001)  # one sample a series per write, in order
            self._last_t = t
            flags = catalog.GENERATION_FLAGS_TOTAL.name
            samples = [Sample(Labels({**k, "__name__": flags}), t, self.flags[k]) for k in touched_flags]
            for k in touched_scores:
                samples += self.scores[k].samples(dict(k), t)
        return self._write(samples, t)

    def _span(self, span: SpanRecord, flags: set[Labels], scores: set[Labels]) -> None:
        base = _labels(span)
        for flag, detail in _finish_flags(span.attributes):
            key = Labels({**base, "flag": flag, "detail": detail})
            if self._room(key, self.flags):
                self.flags[key] = self.flags.get(key, 0.0) + 1.0
                flags.add(key)
        for event in span.events:
            name, value = event.attributes.get("gen_ai.evaluation.name"), _number(
                event.attributes.get("gen_ai.evaluation.score.value"))
            if event.name != EVALUATION_EVENT or not isinstance(name, str) or not name or value is None:
                continue
            key = Labels({**base, "name": name[:64]})
            if self._room(key, self.scores):
                self.scores.setdefault(key, _Histogram()).observe(value)
                scores.add(key)

    def _room(self, key: Labels, table: dict[Labels, Any]) -> bool:
        if key in table or len(self.flags) + len(self.scores) < self.max_series:
            return True
        log.warning("GenAI spans: over %d label sets, %s not counted", self.max_series, dict(key))
        return False

    def _write(self, samples: list[Sample], now: float) -> int:
        try:
            check_batch(self.store, [s.labels for s in samples], [s.t for s in samples], now,
                        sample_limit=self.sample_limit, what="GenAI span counts", retention=self.retention)
            self.store.append(samples)
        except (LimitExceeded, InputError, StoreError) as exc:
            log.warning("GenAI spans: %d samples not written: %s", len(samples), exc)
            return 0
        return len(samples)


def _labels(span: SpanRecord) -> dict[str, str]:
    a = span.attributes
    model = a.get("gen_ai.response.model") or a.get("gen_ai.request.model") or ""
    route = a.get("http.route") or a.get("gen_ai.operation.name") or a.get("llm.request.type") or ""
    tenant = a.get("tenant.id") or "default"
    out = {"service": span.service, "model": str(model)[:128], "route": str(route)[:128],
           "tenant": str(tenant)[:128]}
    return {k: v for k, v in out.items() if v}


def _finish_flags(attributes: dict[str, Any]) -> list[tuple[str, str]]:
    """``(flag, detail)`` of each flagging finish reason of the span (once each)."""
    reasons = attributes.get("gen_ai.response.finish_reasons")
    items = [reasons] if isinstance(reasons, str) else list(reasons) if isinstance(reasons, list) else []
    items += [v for k, v in attributes.items() if _CHOICE_REASON.fullmatch(k)]  # OpenLLMetry's per choice
    if any(v and _CHOICE_REFUSAL.fullmatch(k) for k, v in attributes.items()):
        items.append("refusal")  # OpenLLMetry's text of OpenAI's refusal: finish reason "stop"
    out = []
    for reason in sorted({str(r).lower() for r in items}):
        flag = FINISH_FLAGS.get(reason)
        if flag is not None:
            out.append((flag, reason if flag == "guardrail" else ""))
    return sorted(set(out))


def _number(value: Any) -> float | None:
    try:
        v = float(value)  # intValue arrives as a string in OTLP/JSON
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and not isinstance(value, bool) else None
