"""The demo's model-quality view: drift and confidence aggregators on the demo service's Monitor.

The reference profile is built at start-up from the feature generator at
drift 0 (what the model was trained on); ``DriftAggregator`` then scores each
window of served predictions against it, on the demo's compressed clock, and
``DriftView`` shows the latest window's PSI per feature under the live table.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from inferwatch.demo._labels import LateLabels, performance_aggregators
from inferwatch.demo._model import FEATURES, FeatureGenerator, train_model
from inferwatch.demo._runner import DemoComponents, DemoContext
from inferwatch.quality import ConfidenceAggregator, DataQualityAggregator, DriftAggregator, build_profile

__all__ = ["DriftView", "quality_components"]

SERVICE, MODEL = "demo", "ctr-logreg"
DEMO_MIN_SAMPLES = 20
"""Rows a demo drift window needs before its PSI is published."""


class DriftView:
    """A DemoPart printing the last closed window's PSI (largest first) and anomalous ratio."""

    def __init__(self, drift: DriftAggregator, top: int = 3) -> None:
        self.drift, self.top = drift, top
        self._shown: float | None = None  # start of the last window printed (plain mode)

    def start(self, ctx: DemoContext) -> None:
        """Nothing to start: the aggregator runs on the SDK's thread."""

    def refresh(self, ctx: DemoContext, story_t: float) -> Iterable[str]:
        """One line: ``drift: clicks_7d PSI 2.10 rollback, ...``."""
        last = self.drift.last
        if not ctx.tty:  # plain lines: only when a window closes
            if last is None or last.start == self._shown:
                return []
            self._shown = last.start
        if last is None:
            return ["drift: first window still open"]
        worst = sorted(last.features.values(), key=lambda f: -f.psi)[: self.top]
        feats = ", ".join(f"{f.name} PSI {f.psi:.2f} {f.verdict.value}" for f in worst)
        ratio = last.anomalous_ratio
        anomalous = "-" if ratio is None else f"{100 * ratio:.1f}%"
        return [f"drift ({last.rows} rows): {feats}; anomalous {anomalous}"]

    def stop(self, ctx: DemoContext) -> None:
        """Nothing to stop."""


def quality_components(
    window_s: float = 300.0, seed: int | None = None, label_delay_s: float = 360.0,
) -> tuple[DemoComponents, DriftView]:
    """Components with drift, confidence and performance aggregators (windows of ``window_s`` story s).

    The model is trained here (as ``run_demo`` would from the same seed) so that the
    performance estimator's reference is that model's predictions; labels arrive
    ``label_delay_s`` story seconds after each prediction.
    """
    seeds = np.random.SeedSequence(seed).spawn(3)
    model = train_model(FeatureGenerator(np.random.default_rng(seeds[1])))
    estimated, realized = performance_aggregators(
        model, FeatureGenerator(np.random.default_rng(seeds[2])), service=SERVICE, model_name=MODEL,
        window_s=window_s, min_rows=DEMO_MIN_SAMPLES)
    reference = FeatureGenerator(np.random.default_rng(seed)).sample(5000)
    profile = build_profile({name: reference[:, i] for i, name in enumerate(FEATURES)})
    # the demo's compressed windows hold tens to hundreds of rows (far fewer in its outage), not 1000;
    # the default pack's critical-value guard still keeps noise from firing
    drift = DriftAggregator(profile, service=SERVICE, model=MODEL, window=window_s,
                            min_samples=DEMO_MIN_SAMPLES)
    confidence = ConfidenceAggregator(service=SERVICE, model=MODEL, window=window_s)
    # missing and out-of-range shares per feature against the same reference (the dashboard's panel)
    quality = DataQualityAggregator(profile, service=SERVICE, model=MODEL, window=window_s,
                                    min_samples=DEMO_MIN_SAMPLES)
    view = DriftView(drift)
    labels = LateLabels(estimated, realized, delay_s=label_delay_s)
    components = DemoComponents(aggregators=[drift, confidence, quality, estimated, realized],
                                parts=[view, labels],
                                model=model)
    return components, view
