"""``Monitor``'s methods for generative (LLM) services: streamed responses, engine state, goodput, cost."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from inferwatch.sdk._generation import (
    CURRENT,
    ENGINE,
    Generation,
    GenerationSettings,
    Price,
    generation_prices,
    generation_targets,
    record,
)

if TYPE_CHECKING:
    from inferwatch.sdk._aggregator import Aggregator
    from inferwatch.sdk._hooks import MonitorHooks

__all__ = ["GenerationMethods"]


class GenerationMethods:
    """The part of ``Monitor`` for streamed (LLM) responses; ``Monitor.__init__`` sets the state."""

    service: str
    model: str
    version: str
    generation_settings: GenerationSettings
    """Goodput targets and prices (replaced whole by ``set_generation_targets`` / ``set_prices``)."""
    _generations_attached: bool
    _engine_attached: bool
    _attach_lock: threading.Lock

    if TYPE_CHECKING:  # Monitor's own
        def attach(self, aggregator: Aggregator) -> None: ...
        def observe(self, kind: str, payload: Any) -> None: ...
        def _reject(self, kind: str) -> None: ...

    def track_generation(self, route: str, model: str | None = None, *, input_tokens: int = 0,
                         tenant: str = "") -> Generation:
        """A context manager for one streamed (LLM) response: ``.tokens(n)`` per token, ``.first_token()``."""
        self.enable_generations()
        hooks = cast("MonitorHooks", self)  # a Monitor: this class is one of its bases
        return Generation(hooks, route, self.model if model is None else model, input_tokens, tenant)

    def record_generation(
        self, route: str, status: int, ttft_s: float | None, duration_s: float, input_tokens: int,
        output_tokens: int, queue_s: float | None = None, *, model: str | None = None,
        finish_reason: str = "", tenant: str = "",
    ) -> None:
        """Record one finished generation at once (invalid values are counted, never raised)."""
        self.enable_generations()
        mark = CURRENT.get()
        if mark is not None:
            mark.explicit = True
        record(cast("MonitorHooks", self), route, self.model if model is None else model, status, ttft_s,
               duration_s, input_tokens, output_tokens, queue_s, finish_reason=finish_reason, tenant=tenant)

    def set_generation_targets(self, *, ttft_s: float = 2.5, tpot_s: float = 0.2) -> None:
        """The targets a good generation meets (``inferwatch_generation_good_requests_total``: goodput)."""
        self.generation_settings = generation_targets(self.generation_settings, ttft_s, tpot_s)

    def set_prices(self, prices: Mapping[str, Price]) -> None:
        """Prices per model (``Price(input_per_million, output_per_million, currency)``): cost by tenant."""
        self.generation_settings = generation_prices(self.generation_settings, prices)

    def record_engine(self, *, model: str | None = None, running: float | None = None,
                      waiting: float | None = None, kv_cache_usage: float | None = None, preemptions: int = 0,
                      prefix_cache_queries: int = 0, prefix_cache_hits: int = 0) -> None:
        """The engine's state now (gauges) and what happened since the last call (counts); never raises."""
        if not self._engine_attached:
            from inferwatch.sdk._engine import EngineAggregates

            with self._attach_lock:
                if not self._engine_attached:
                    self.attach(EngineAggregates(self.service, self.version, self._reject))
                    self._engine_attached = True
        self.observe(ENGINE, (self.model if model is None else model, running, waiting, kv_cache_usage,
                              preemptions, prefix_cache_queries, prefix_cache_hits))

    def enable_generations(self) -> None:
        """Attach the generation aggregates (once); the streaming middleware calls it before recording."""
        if self._generations_attached:
            return
        from inferwatch.sdk._generation_metrics import GenerationAggregates

        with self._attach_lock:  # attached before any thread enqueues one
            if not self._generations_attached:
                self.attach(GenerationAggregates(self.service, self.version, self._reject,
                                                 settings=lambda: self.generation_settings))
                self._generations_attached = True
