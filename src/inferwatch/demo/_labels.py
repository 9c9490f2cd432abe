"""The demo's delayed labels: estimated performance now, realized performance when the labels come.

The reference is the demo model's own predictions on generated rows at drift 0
with their true labels, so ``EstimatedPerformance`` (CBPE) scores each window
of served predictions at once; ``LateLabels`` hands each served prediction its
true label ``delay_s`` story seconds later (drawn from the same relation the
model was trained on), which ``RealizedPerformance`` joins by request id. When
the story switches to the cheap model path, the estimate drops in the next
window, the realized accuracy only once the labels arrive.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

from inferwatch.demo._model import FeatureGenerator, LogisticModel
from inferwatch.demo._runner import DemoContext
from inferwatch.quality import CBPE, EstimatedPerformance, RealizedPerformance

__all__ = ["LateLabels", "performance_aggregators"]

REFERENCE_ROWS = 5000


def performance_aggregators(
    model: LogisticModel, gen: FeatureGenerator, *, service: str, model_name: str, window_s: float,
    min_rows: int,
) -> tuple[EstimatedPerformance, RealizedPerformance]:
    """CBPE fitted on the model's predictions over a labelled reference, and the realized join."""
    x = gen.sample(REFERENCE_ROWS)
    y = gen.labels(x)
    z = ((x - model.mean) / model.std) @ model.weights + model.bias
    score = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
    fitted = CBPE().fit(y, (score >= 0.5).astype(np.float64), score)
    estimated = EstimatedPerformance(fitted, service=service, model=model_name, window=window_s,
                                     min_rows=min_rows)
    realized = RealizedPerformance(service=service, model=model_name, window=300, max_pending=50_000)
    return estimated, realized


class LateLabels:
    """A DemoPart: each served prediction gets its true label ``delay_s`` story seconds later.

    It also prints the estimated accuracy (with its band) beside the realized one.
    """

    def __init__(
        self, estimated: EstimatedPerformance, realized: RealizedPerformance, *, delay_s: float = 360.0,
        max_waiting: int = 50_000,
    ) -> None:
        self.estimated, self.realized = estimated, realized
        self.delay_s = delay_s
        self._shown: object = None  # the last estimate printed (plain mode)
        self._waiting: deque[tuple[float, str, NDArray[np.float64]]] = deque(maxlen=max_waiting)
        self._lock = threading.Lock()
        self.sent = 0

    def record(self, now: float, request_id: str, x: NDArray[np.float64]) -> None:
        """Keep a served prediction's row until its label is due (called by the service)."""
        with self._lock:
            self._waiting.append((now, request_id, x))

    def start(self, ctx: DemoContext) -> None:
        """Ask the service for each prediction's request id and row."""
        ctx.service.on_prediction = lambda rid, x: self.record(ctx.clock.now(), rid, x)

    def refresh(self, ctx: DemoContext, story_t: float) -> Iterable[str]:
        """Send the labels that are due; one line with the counts."""
        due_before = ctx.clock.now() - self.delay_s
        with self._lock:
            due = []
            while self._waiting and self._waiting[0][0] <= due_before:
                due.append(self._waiting.popleft())
            waiting = len(self._waiting)
        if due:
            truth = ctx.features.labels(np.stack([x for _, _, x in due]))
            for (_, rid, _), y in zip(due, truth, strict=True):
                ctx.monitor.observe_label(rid, int(y))
            self.sent += len(due)
        last = self.estimated.last
        if not ctx.tty:  # plain lines: only when a window's estimate is new
            if last is None or last is self._shown:
                return []
            self._shown = last
        return [self.line(waiting)]

    def line(self, waiting: int) -> str:
        """``accuracy: estimated 0.78 [0.74, 0.82] (565 rows); realized 0.77 (300 labels, 120 to come)``."""
        last = self.estimated.last
        est = ("first window still open" if last is None else
               f"estimated {last.estimated['accuracy']:.3f} [{last.lower['accuracy']:.3f}, "
               f"{last.upper['accuracy']:.3f}] ({last.rows} rows)")
        real = self.realized.metrics().get("accuracy")
        labelled = f"realized {real:.3f}" if real is not None and math.isfinite(real) else "realized -"
        return (f"accuracy: {est}; {labelled} ({self.sent} labels in, {waiting} due "
                f"{self.delay_s / 60:g} story min after their prediction)")

    def stop(self, ctx: DemoContext) -> None:
        """Stop asking the service."""
        ctx.service.on_prediction = None
