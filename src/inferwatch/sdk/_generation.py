"""Generative (LLM) serving: ``track_generation`` around a streamed response, ``record_generation`` once.

The per-token call, ``Generation.tokens(n)``, adds to an int attribute and
nothing else (the first call also reads the clock once, when ``first_token``
was not called): no lock, no queue, no allocation. When the block ends, one
tuple goes onto the monitor's queue, as ``record_request`` does; time per
output token is derived there, as the OpenTelemetry GenAI conventions define
it: ``(duration - ttft) / (output_tokens - 1)``, one observation per response.

Under the SDK's ASGI middleware times count from the request's arrival (the
conventions' time to first token includes queueing and prefill), and the
request's trace span gets the GenAI attributes when tracing is on.

The metrics and the OpenTelemetry GenAI semantic-convention names they stand
for (``docs/gen-ai/gen-ai-metrics.md``, model-server metrics; the bucket
boundaries are the conventions' own):

=====================================================  ====================================
inferwatch (Prometheus)                                OpenTelemetry GenAI
=====================================================  ====================================
inferwatch_generation_time_to_first_token_seconds      gen_ai.server.time_to_first_token
inferwatch_generation_time_per_output_token_seconds    gen_ai.server.time_per_output_token
inferwatch_generation_duration_seconds                 gen_ai.server.request.duration
inferwatch_generation_input_tokens_total               gen_ai.usage.input_tokens (span), summed
inferwatch_generation_output_tokens_total              gen_ai.usage.output_tokens (span), summed
inferwatch_generation_output_tokens_per_second         (none: output tokens / duration)
inferwatch_generation_queue_duration_seconds           (none; vLLM's request_queue_time_seconds)
inferwatch_generation_requests_total{code}             (none; error.type on the duration)
=====================================================  ====================================
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from numbers import Integral, Real
from types import TracebackType
from typing import TYPE_CHECKING, Any

from inferwatch._exceptions import ConfigError

if TYPE_CHECKING:
    from inferwatch.sdk._hooks import MonitorHooks as Monitor  # the hooks it uses: no import cycle

log = logging.getLogger("inferwatch.sdk")

__all__ = [
    "DURATION_BUCKETS",
    "ENGINE",
    "GENERATION",
    "GENERATION_EXEMPLAR",
    "TOKENS_PER_SECOND_BUCKETS",
    "TOKEN_BUCKETS",
    "TPOT_BUCKETS",
    "TTFT_BUCKETS",
    "Generation",
    "GenerationSettings",
    "Price",
    "RequestMark",
    "record",
]

GENERATION = "generation"
"""Observation kind: ``(route, model, status, ttft_s|None, duration_s, in, out, queue_s|None, finish,
tenant)``."""

GENERATION_EXEMPLAR = "generation_exemplar"
"""Observation kind: ``(route, model, ttft_s|None, duration_s, output_tokens, queue_s|None, trace_id)``."""

TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
"""``gen_ai.server.time_to_first_token`` boundaries (also used for queue time, a part of it)."""

TPOT_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5)
"""``gen_ai.server.time_per_output_token`` boundaries."""

DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
"""``gen_ai.server.request.duration`` boundaries."""

TOKENS_PER_SECOND_BUCKETS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0)
"""Output tokens per second of one response (no convention defines this one)."""

TOKEN_BUCKETS = (1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0)
"""Tokens per request (``gen_ai.client.token.usage``'s boundaries, up to a million)."""


@dataclass(frozen=True)
class Price:
    """A model's price: per million input and output tokens, in ``currency``."""

    input_per_million: float
    output_per_million: float
    currency: str = "USD"

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """The cost of one request."""
        return (input_tokens * self.input_per_million + output_tokens * self.output_per_million) / 1e6


@dataclass(frozen=True)
class GenerationSettings:
    """Goodput targets and prices per model (``Monitor.set_generation_targets`` / ``set_prices``)."""

    ttft_s: float = 2.5
    """A good generation's time to first token is at most this (the pack's P1 threshold)."""
    tpot_s: float = 0.2
    """... and its time per output token at most this (the pack's P2 threshold)."""
    prices: Mapping[str, Price] = field(default_factory=dict)
    budgets: Mapping[tuple[str, str], float] = field(default_factory=dict)
    """Daily spend budget per (tenant, currency) (``Monitor.set_tenant_budgets``)."""


ENGINE = "engine"
"""Observation kind: ``(model, running|None, waiting|None, kv_cache_usage|None, preemptions, queries,
hits)``."""


def generation_targets(settings: GenerationSettings, ttft_s: float, tpot_s: float) -> GenerationSettings:
    """``settings`` with new goodput targets (positive, finite seconds: else ``ConfigError``)."""
    for name, v in (("ttft_s", ttft_s), ("tpot_s", tpot_s)):
        if not (isinstance(v, int | float) and 0.0 < v < math.inf):
            raise ConfigError(f"set_generation_targets: {name} must be positive seconds, got {v!r}")
    return replace(settings, ttft_s=float(ttft_s), tpot_s=float(tpot_s))


def tenant_budgets(settings: GenerationSettings, budgets: Mapping[str, float],
                   currency: str) -> GenerationSettings:
    """``settings`` with new daily budgets per tenant (positive, finite amounts: else ``ConfigError``)."""
    for tenant, v in budgets.items():
        if not (isinstance(tenant, str) and tenant and isinstance(v, int | float) and 0.0 < v < math.inf):
            raise ConfigError(f"set_tenant_budgets: {tenant!r}: expected a positive daily amount, got {v!r}")
    if not (isinstance(currency, str) and currency):
        raise ConfigError(f"set_tenant_budgets: currency must be a non-empty string, got {currency!r}")
    return replace(settings, budgets={(t, currency): float(v) for t, v in budgets.items()})


def generation_prices(settings: GenerationSettings, prices: Mapping[str, Price]) -> GenerationSettings:
    """``settings`` with a new price table (non-negative prices, a currency: else ``ConfigError``)."""
    for model, p in prices.items():
        ok = isinstance(p, Price) and p.currency and all(
            isinstance(v, int | float) and 0.0 <= v < math.inf
            for v in (p.input_per_million, p.output_per_million))
        if not (isinstance(model, str) and ok):
            raise ConfigError(f"set_prices: {model!r}: expected Price(input_per_million, output_per_million, "
                              f"currency) with non-negative prices, got {p!r}")
    return replace(settings, prices=dict(prices))


CLIENT_CLOSED = 499
"""Status recorded when the stream is abandoned (client gone: ``GeneratorExit``, cancellation)."""


class RequestMark:
    """What the middleware shares with a generation tracked inside its request."""

    __slots__ = ("explicit", "generation", "t0")

    def __init__(self, t0: float) -> None:
        self.t0 = t0
        self.explicit = False
        """Set when the application tracks the generation itself (the middleware then does not)."""
        self.generation: tuple[Any, ...] | None = None
        """The last generation recorded in this request (its trace id becomes that one's exemplar)."""

    def exemplar(self, monitor: Monitor, trace_id: str) -> None:
        """Make the request's kept trace the exemplar of its generation's buckets."""
        item = self.generation
        if item is not None:
            route, model, _, ttft, duration, _, tokens_out, queue = item[:8]
            monitor.observe(GENERATION_EXEMPLAR, (route, model, ttft, duration, tokens_out, queue, trace_id))


CURRENT: ContextVar[RequestMark | None] = ContextVar("inferwatch_generation_request", default=None)
"""The request the middleware is handling in this context (child tasks inherit it)."""


class Generation:
    """One streamed response; ``with monitor.track_generation(route=..., model=...) as g:``.

    Call ``g.tokens(n)`` as tokens are produced (the first call marks the
    first token, unless ``g.first_token()`` did); set ``g.input_tokens``,
    ``g.status`` (default 200; an exception records 500, an abandoned stream
    499) and, if the engine queues, ``g.dequeued()`` when processing begins.

    >>> from inferwatch.model import SimulatedClock
    >>> from inferwatch.sdk import Monitor
    >>> clock = SimulatedClock(0.0)
    >>> m = Monitor(service="chat", clock=clock)
    >>> with m.track_generation(route="/v1/chat/completions", model="llama-3-8b") as g:
    ...     g.input_tokens = 12
    ...     clock.advance(0.25)   # prefill
    ...     for _ in range(5):
    ...         g.tokens(1)
    ...         clock.advance(0.02)
    >>> labels = {"service": "chat", "model": "llama-3-8b", "version": "", "route": "/v1/chat/completions"}
    >>> m.get_sample_value("inferwatch_generation_time_to_first_token_seconds_sum", labels)
    0.25
    >>> round(m.get_sample_value("inferwatch_generation_time_per_output_token_seconds_sum", labels), 6)
    0.025
    >>> m.close()
    """

    __slots__ = ("_first", "_mark", "_monitor", "_queue", "_t0", "finish_reason", "generation_id",
                 "input_tokens", "model", "output_tokens", "prompt_version", "route", "status", "tenant")

    def __init__(self, monitor: Monitor, route: str, model: str, input_tokens: int = 0,
                 tenant: str = "", *, prompt_version: str = "", generation_id: str = "") -> None:
        self._monitor, self.route, self.model = monitor, route, model
        self.input_tokens, self.output_tokens, self.status = input_tokens, 0, 200
        self.finish_reason = ""
        """Why it ended, as the engine says (``stop``, ``length``...); empty: ``unknown`` (or error/abort)."""
        self.tenant = tenant
        """Who the request is for (cost and requests by tenant); empty: ``default``."""
        self.prompt_version, self.generation_id = prompt_version, generation_id
        self._t0 = self._first = self._queue = -1.0
        self._mark: RequestMark | None = None

    def flag(self, flag: str, detail: str = "") -> None:
        """Flag this generation: ``refused``, ``guardrail`` (detail: which), ``schema_invalid``,
        ``truncated``.

        Counted in ``inferwatch_generation_flags_total``; an unknown flag is counted as invalid, never raised.
        """
        from inferwatch.sdk._generation_quality import FLAG, GenerationLabels

        labels = GenerationLabels(self.route, self.model, "", self.prompt_version, self.tenant)
        self._monitor.observe(FLAG, (labels, flag, detail))

    def __enter__(self) -> Generation:
        mark = self._mark = CURRENT.get()
        if mark is not None:
            mark.explicit = True
            self._t0 = mark.t0
        else:
            self._t0 = self._monitor.monotonic()
        return self

    def tokens(self, n: int = 1) -> None:
        """``n`` more output tokens were produced (the hot path: an int add)."""
        self.output_tokens += n
        if self._first < 0.0:
            self._first = self._monitor.monotonic()

    def first_token(self) -> None:
        """Mark the first token's time now (without counting it); later calls change nothing."""
        if self._first < 0.0:
            self._first = self._monitor.monotonic()

    def dequeued(self) -> None:
        """Mark the end of queueing: queue time is the time from arrival to this call."""
        if self._queue < 0.0:
            self._queue = self._monitor.monotonic() - self._t0

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        m, t0 = self._monitor, self._t0
        duration = m.monotonic() - t0
        ttft = self._first - t0 if self._first >= 0.0 else None
        status = self.status if exc_type is None else _failed_status(exc_type)
        record(m, self.route, self.model, status, ttft, duration, self.input_tokens, self.output_tokens,
               self._queue if self._queue >= 0.0 else None, finish_reason=self.finish_reason,
               tenant=self.tenant)


def _failed_status(exc_type: type[BaseException]) -> int:
    if issubclass(exc_type, GeneratorExit) or exc_type.__name__ == "CancelledError":
        return CLIENT_CLOSED
    return 500


def record(monitor: Monitor, route: str, model: str, status: int, ttft_s: float | None, duration_s: float,
           input_tokens: int, output_tokens: int, queue_s: float | None,
           mark: RequestMark | None = None, *, finish_reason: str = "", tenant: str = "") -> None:
    """Enqueue one generation (checked on the background thread) and annotate the current span."""
    item = (route, model, status, ttft_s, duration_s, input_tokens, output_tokens, queue_s, finish_reason,
            tenant)
    monitor.observe(GENERATION, item)
    mark = mark if mark is not None else CURRENT.get()
    if mark is not None:
        mark.generation = item
    if monitor.tracing is not None:
        try:
            annotate_span(model, ttft_s, duration_s, input_tokens, output_tokens)
        except Exception:  # bad values from the application: the metrics side counts them
            log.debug("inferwatch sdk: GenAI span attributes not set", exc_info=True)


def valid(route: Any, model: Any, status: Any, ttft_s: Any, duration_s: Any, input_tokens: Any,
          output_tokens: Any, queue_s: Any, finish_reason: Any = "", tenant: Any = "") -> bool:
    """Strings, an HTTP status, finite non-negative times and token counts (ttft and queue may be None)."""
    return (isinstance(route, str) and isinstance(model, str) and _int_in(status, 100, 599)
            and _short(finish_reason) and _short(tenant)
            and _seconds(duration_s) and (ttft_s is None or _seconds(ttft_s))
            and (queue_s is None or _seconds(queue_s))
            and _int_in(input_tokens, 0, 1 << 62) and _int_in(output_tokens, 0, 1 << 62))


def _short(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 128


def _int_in(value: Any, low: int, high: int) -> bool:
    kind = type(value)  # plain int first: the ABC check is the slow path (numpy integers)
    if kind is not int and (kind is bool or not isinstance(value, Integral)):
        return False
    return bool(low <= value <= high)


def _seconds(value: Any) -> bool:
    kind = type(value)
    if kind is not float and kind is not int and (kind is bool or not isinstance(value, Real)):
        return False
    return bool(0.0 <= value < math.inf)


def time_per_output_token(ttft_s: float | None, duration_s: float, output_tokens: int) -> float | None:
    """The conventions' time per output token: the time after the first token over the tokens after it.

    >>> time_per_output_token(0.25, 0.75, 11)
    0.05
    >>> time_per_output_token(0.25, 0.75, 1) is None
    True
    """
    if ttft_s is None or output_tokens < 2:
        return None
    return max(duration_s - ttft_s, 0.0) / (output_tokens - 1)


def annotate_span(model: str, ttft_s: float | None, duration_s: float, input_tokens: int,
                  output_tokens: int) -> None:
    """Put the GenAI attributes on the current span (the request's server span under the middleware)."""
    from opentelemetry import trace

    span = trace.get_current_span()
    if not span.is_recording():
        return
    attributes: dict[str, Any] = {
        "gen_ai.request.model": model,
        "gen_ai.usage.input_tokens": input_tokens,
        "gen_ai.usage.output_tokens": output_tokens,
        "gen_ai.server.request.duration": duration_s,
    }
    if ttft_s is not None:
        attributes["gen_ai.server.time_to_first_token"] = ttft_s
    tpot = time_per_output_token(ttft_s, duration_s, output_tokens)
    if tpot is not None:
        attributes["gen_ai.server.time_per_output_token"] = tpot
    span.set_attributes(attributes)
