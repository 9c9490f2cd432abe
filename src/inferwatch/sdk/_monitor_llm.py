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
    tenant_budgets,
)
from inferwatch.sdk._generation_quality import (
    FEEDBACK,
    SCORE,
    UNKNOWN_LABELS,
    GenerationIds,
    GenerationLabels,
    QualityAggregates,
    sentiment,
)

if TYPE_CHECKING:
    import random

    from inferwatch.model import Clock
    from inferwatch.sdk._aggregator import Aggregator
    from inferwatch.sdk._hooks import MonitorHooks
    from inferwatch.sdk._judge import Judge, JudgeItem
    from inferwatch.sdk._judge_config import JudgeConfig

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
    _generation_ids: GenerationIds | None = None
    """Recent generation ids and their labels (with the quality aggregates: attached on first use)."""
    judge_worker: Judge | None = None
    """The asynchronous judge (``set_judge``), None until one is set."""
    _clock: Clock
    tracing: Any

    if TYPE_CHECKING:  # Monitor's own
        def attach(self, aggregator: Aggregator) -> None: ...
        def observe(self, kind: str, payload: Any) -> None: ...
        def _reject(self, kind: str) -> None: ...

    def track_generation(self, route: str, model: str | None = None, *, input_tokens: int = 0,
                         tenant: str = "", prompt_version: str = "", generation_id: str = "") -> Generation:
        """A context manager for one streamed (LLM) response: ``.tokens(n)`` per token, ``.first_token()``,
        ``.flag("refused")``; ``generation_id`` joins later scores and feedback to its labels."""
        self.enable_generations()
        model = self.model if model is None else model
        ids = self._quality_ids()  # attached before the generation can flag itself
        if generation_id:
            ids.remember(str(generation_id), GenerationLabels(
                route, model, "", prompt_version, tenant), _trace_id() if self.tracing is not None else "")
        hooks = cast("MonitorHooks", self)  # a Monitor: this class is one of its bases
        return Generation(hooks, route, model, input_tokens, tenant, prompt_version=prompt_version,
                          generation_id=generation_id)

    def record_score(self, name: str, value: float, *, route: str = "", model: str | None = None,
                     model_version: str = "", prompt_version: str = "", tenant: str = "",
                     generation_id: str = "") -> None:
        """One evaluation of a generation (``inferwatch_generation_score{name}``); never raises.

        Labels not given come from the generation ``generation_id`` names (see ``track_generation``).
        """
        labels = self._join(route, model, model_version, prompt_version, tenant, generation_id)
        if labels is None:
            self._reject(SCORE)
            return
        if generation_id:  # its id (and trace) become the bucket's exemplar: the worst-scored, by id
            trace = self._generation_ids.trace(generation_id) if self._generation_ids is not None else ""
            self.observe(SCORE, (labels, name, value, generation_id, trace))
        else:
            self.observe(SCORE, (labels, name, value))

    def record_feedback(self, positive: bool | None = None, *, rating: float | None = None,
                        scale: float = 5.0, generation_id: str = "", route: str = "",
                        model: str | None = None, model_version: str = "", prompt_version: str = "",
                        tenant: str = "") -> None:
        """A user's thumb (``positive``) or ``rating`` out of ``scale`` on a generation, possibly hours
        later: counted by sentiment under the generation's labels; a rating is also a ``rating`` score."""
        mood = sentiment(positive, rating, scale) if isinstance(scale, int | float) and scale > 0 else None
        labels = self._join(route, model, model_version, prompt_version, tenant, generation_id)
        if mood is None or labels is None:
            self._reject(FEEDBACK)
            return
        self.observe(FEEDBACK, (labels, mood))
        if positive is None:
            self.observe(SCORE, (labels, "rating", rating))

    def set_judge(self, config: JudgeConfig, *, rng: random.Random | None = None) -> Judge:
        """Start the asynchronous judge (once): ``judge(...)`` then sends a sampled share of generations
        to ``config``'s OpenAI-compatible endpoint, off the request path; the scores come back as
        ``record_score(config.name, ...)``; its own failures are ``inferwatch_judge_*`` self-metrics."""
        from inferwatch._exceptions import ConfigError
        from inferwatch.sdk._judge import Judge
        from inferwatch.sdk._judge_config import JudgeConfig

        if not isinstance(config, JudgeConfig):
            raise ConfigError(f"set_judge: config must be a JudgeConfig, got {config!r}")
        with self._attach_lock:
            if self.judge_worker is not None:
                raise ConfigError("set_judge: this monitor has a judge already")
            self.judge_worker = Judge(config, self.service, self._judged, self._clock, rng=rng)
        self.attach(self.judge_worker)
        return self.judge_worker

    def judge(self, prompt: str, answer: str, *, generation_id: str = "", route: str = "",
              model: str | None = None, model_version: str = "", prompt_version: str = "",
              tenant: str = "") -> bool:
        """Hand one generation to the asynchronous judge (True: sampled and queued); never blocks or
        raises; a no-op (False) without ``set_judge``. Labels not given come from ``generation_id``."""
        worker = self.judge_worker
        texts = isinstance(prompt, str) and isinstance(answer, str)
        if worker is None or not texts or not worker.sampled():
            return False
        from inferwatch.sdk._judge import JudgeItem

        labels = {"route": route, "model": model, "model_version": model_version,
                  "prompt_version": prompt_version, "tenant": tenant}
        return worker.submit(JudgeItem(prompt, answer, generation_id, labels))

    def _judged(self, item: JudgeItem, value: float) -> None:
        """The judge thread's way back: the score, joined to the generation like any other."""
        self.record_score(self.judge_worker.config.name if self.judge_worker else "judge", value,
                          generation_id=item.generation_id, **item.labels)

    def _join(self, route: str, model: str | None, model_version: str, prompt_version: str, tenant: str,
              generation_id: str) -> GenerationLabels | None:
        """The labels of a score or feedback (None: a generation id that is not a string)."""
        if not isinstance(generation_id, str):
            return None
        ids = self._quality_ids()  # also attaches the aggregates on first use
        joined = ids.get(generation_id) if generation_id else None
        if joined is None:
            if generation_id and not route:  # an id we never (or no longer) knew: never raised
                return UNKNOWN_LABELS
            joined = GenerationLabels(route, self.model, "", "", "")
        return GenerationLabels(route or joined.route, joined.model if model is None else model,
                                model_version or joined.version, prompt_version or joined.prompt_version,
                                tenant or joined.tenant)

    def _quality_ids(self) -> GenerationIds:
        ids = self._generation_ids
        if ids is None:
            with self._attach_lock:
                if self._generation_ids is None:
                    self.attach(QualityAggregates(self.service, self.version, self._reject))
                    self._generation_ids = GenerationIds()
            ids = self._generation_ids
        return ids

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

    def set_tenant_budgets(self, budgets: Mapping[str, float], *, currency: str = "USD") -> None:
        """Daily spend budgets per tenant (``inferwatch_generation_tenant_daily_budget``): the
        ``TenantSpendOverBudget`` rules compare the tenant's cost with them."""
        self.generation_settings = tenant_budgets(self.generation_settings, budgets, currency)
        self.enable_generations()

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


def _trace_id() -> str:
    """The current span's trace id in hex (``""`` outside a recorded span)."""
    try:
        from opentelemetry import trace

        ctx = trace.get_current_span().get_span_context()
    except Exception:  # tracing set up but OpenTelemetry broken: no trace id, never an error
        return ""
    return format(ctx.trace_id, "032x") if ctx.is_valid else ""
