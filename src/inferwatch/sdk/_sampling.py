"""Tail sampling in the service: decide when a trace's local root ends, export only kept traces.

Head sampling decides when a request starts, before anyone knows whether it
will be slow or fail, so the traces that explain an alert are sampled away with
the rest. ``TailSamplingProcessor`` buffers each trace's ended spans until its
local root (the span without a parent in this process) ends, then keeps the
trace when any span errored, when the root took at least ``slow_threshold_s``,
or when the trace id falls in the kept fraction (the same id-based rule as
``TraceIdRatioBased``, so services agree on the "rest"). Spans of dropped
traces never reach the exporter. The buffer is bounded; overflow is counted.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import StatusCode

__all__ = ["SamplingCounts", "TailSamplingProcessor", "keeps_by_ratio"]

MAX_PENDING_TRACES = 10_000
"""Traces buffered at once; spans of a new trace beyond this are dropped and counted."""

MAX_SPANS_PER_TRACE = 1_000
"""Spans buffered per trace; more are dropped and counted (a runaway loop must not eat memory)."""

DECIDED_MEMORY = 10_000
"""Decisions remembered for spans that end after their root (late async children)."""

_ID_LIMIT = 1 << 64


def keeps_by_ratio(trace_id: int, ratio: float) -> bool:
    """Whether ``trace_id`` is in the kept fraction ``ratio`` (its low 64 bits, as TraceIdRatioBased)."""
    return (trace_id & (_ID_LIMIT - 1)) < round(ratio * _ID_LIMIT)


@dataclass
class SamplingCounts:
    """What the processor did, in spans and traces (read under no lock: monotonic ints)."""

    spans_exported: int = 0
    spans_sampled_out: int = 0
    spans_dropped: int = 0
    traces_kept: dict[str, int] = field(default_factory=lambda: {"error": 0, "slow": 0, "ratio": 0})
    traces_sampled_out: int = 0


@dataclass
class _Pending:
    spans: list[ReadableSpan] = field(default_factory=list)
    errored: bool = False


class TailSamplingProcessor(SpanProcessor):
    """A span processor that forwards whole kept traces to ``downstream`` (e.g. a batch processor)."""

    def __init__(self, downstream: SpanProcessor, *, sample_ratio: float = 0.01,
                 slow_threshold_s: float = 1.0) -> None:
        if not 0.0 <= sample_ratio <= 1.0:
            raise ValueError(f"sample_ratio must be in [0, 1], got {sample_ratio!r}")
        if not slow_threshold_s > 0:
            raise ValueError(f"slow_threshold_s must be > 0, got {slow_threshold_s!r}")
        self.downstream = downstream
        self.sample_ratio, self.slow_threshold_s = sample_ratio, slow_threshold_s
        self._slow_ns = int(slow_threshold_s * 1e9)
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._decided: OrderedDict[int, bool] = OrderedDict()
        self.counts = SamplingCounts()

    def sure_to_keep(self, trace_id: int, span_duration_s: float, failed: bool) -> bool:
        """Whether a trace with this span will be kept, known before its root ends (exemplars)."""
        slow = span_duration_s >= self.slow_threshold_s  # the root lasts at least as long as its stage
        return failed or slow or keeps_by_ratio(trace_id, self.sample_ratio)

    def decided(self, trace_id: int) -> bool | None:
        """Whether the trace was kept, once its local root has ended (None: undecided or forgotten)."""
        with self._lock:
            return self._decided.get(trace_id)

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do: spans are judged when they end."""

    def on_end(self, span: ReadableSpan) -> None:
        """Buffer ``span``; at its trace's local root, export or drop the whole trace."""
        ctx = span.context
        if ctx is None:
            return
        trace_id = ctx.trace_id
        errored = span.status.status_code is StatusCode.ERROR
        local_root = span.parent is None or span.parent.is_remote
        with self._lock:
            late = self._decided.get(trace_id)
            if late is not None:
                batch = [span] if late else []
                self._count_late(late)
            elif local_root:
                batch = self._decide(trace_id, span, errored)
            else:
                self._buffer(trace_id, span, errored)
                return
        for s in batch:
            self.downstream.on_end(s)

    def _buffer(self, trace_id: int, span: ReadableSpan, errored: bool) -> None:
        pending = self._pending.get(trace_id)
        if pending is None:
            if len(self._pending) >= MAX_PENDING_TRACES:
                self.counts.spans_dropped += 1
                return
            pending = self._pending[trace_id] = _Pending()
        if len(pending.spans) >= MAX_SPANS_PER_TRACE:
            self.counts.spans_dropped += 1
            return
        pending.spans.append(span)
        pending.errored = pending.errored or errored

    def _decide(self, trace_id: int, root: ReadableSpan, errored: bool) -> list[ReadableSpan]:
        pending = self._pending.pop(trace_id, None) or _Pending()
        spans = [*pending.spans, root]
        duration = (root.end_time or 0) - (root.start_time or 0)
        reason = ("error" if errored or pending.errored else "slow" if duration >= self._slow_ns
                  else "ratio" if keeps_by_ratio(trace_id, self.sample_ratio) else None)
        self._remember(trace_id, reason is not None)
        if reason is None:
            self.counts.traces_sampled_out += 1
            self.counts.spans_sampled_out += len(spans)
            return []
        self.counts.traces_kept[reason] += 1
        self.counts.spans_exported += len(spans)
        return spans

    def _remember(self, trace_id: int, kept: bool) -> None:
        self._decided[trace_id] = kept
        if len(self._decided) > DECIDED_MEMORY:
            self._decided.popitem(last=False)

    def _count_late(self, kept: bool) -> None:
        if kept:
            self.counts.spans_exported += 1
        else:
            self.counts.spans_sampled_out += 1

    def shutdown(self) -> None:
        """Drop what is still buffered (roots never ended) and shut the downstream down."""
        with self._lock:
            self.counts.spans_dropped += sum(len(p.spans) for p in self._pending.values())
            self._pending.clear()
        self.downstream.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Flush the downstream processor (buffered, undecided traces stay buffered)."""
        return self.downstream.force_flush(timeout_millis)
