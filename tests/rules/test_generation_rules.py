"""The default pack's generation rules: tiers, dimension, and the SDK's metric names from the catalog."""

from __future__ import annotations

import pytest

from inferwatch.model import metrics
from inferwatch.rules import default_rule_pack

RULES = {r.name: r for r in default_rule_pack()}


@pytest.mark.parametrize(("name", "tier", "spec", "threshold"), [
    ("GenerationSlowFirstToken", "P1", metrics.GENERATION_TTFT, 2.5),
    ("GenerationSlowTokens", "P2", metrics.GENERATION_TPOT, 0.2),
    ("GenerationQueueSlow", "P2", metrics.GENERATION_QUEUE, 1.0),
])
def test_generation_rule_reads_the_sdk_histogram(name: str, tier: str, spec: metrics.MetricSpec,
                                                 threshold: float) -> None:
    rule = RULES[name]
    assert rule.tier.value == tier and rule.dimension.value == "service"
    # the exposed name, as the catalog lists it: a renamed metric would silently empty the alert
    assert f"rate({spec.name}_bucket[5m])" in rule.promql
    assert "histogram_quantile(0.99, sum by (service, model, le)" in rule.promql
    assert rule.comparison == ">" and rule.threshold == threshold
