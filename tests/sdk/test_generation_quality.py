"""Generation quality from the SDK: scores, feedback joined by generation id (late), flags."""

from __future__ import annotations

import pytest

from inferwatch.model import SimulatedClock
from inferwatch.sdk import Monitor

ROUTE = "/v1/chat/completions"


@pytest.fixture
def monitor():
    m = Monitor(service="chat", version="v1", clock=SimulatedClock(0.0))
    yield m
    m.close()


def _labels(**extra: str) -> dict[str, str]:
    base = {"service": "chat", "model": "llama-3-8b", "version": "v1", "route": ROUTE,
            "prompt_version": "p7", "tenant": "acme"}
    return {**base, **extra}


def _generate(m: Monitor, gid: str) -> None:
    with m.track_generation(route=ROUTE, model="llama-3-8b", tenant="acme", prompt_version="p7",
                            generation_id=gid) as g:
        g.tokens(3)


def test_score_joins_its_generations_labels(monitor):
    _generate(monitor, "g1")
    monitor.record_score("judge", 0.82, route=ROUTE, model="llama-3-8b", generation_id="g1")
    monitor.record_score("judge", 0.6, generation_id="g1")  # labels from the id alone
    assert monitor.get_sample_value("inferwatch_generation_score_count", _labels(name="judge")) == 2.0
    assert monitor.get_sample_value("inferwatch_generation_score_sum", _labels(name="judge")) == \
        pytest.approx(1.42)
    bucket = _labels(name="judge", le="0.6")
    assert monitor.get_sample_value("inferwatch_generation_score_bucket", bucket) == 1.0


def test_feedback_hours_later_carries_the_generations_versions(monitor):
    _generate(monitor, "g1")
    for i in range(50):  # other traffic between the answer and the feedback
        _generate(monitor, f"other-{i}")
    monitor._clock.advance(6 * 3600.0)
    monitor.record_feedback(positive=False, generation_id="g1")
    assert monitor.get_sample_value("inferwatch_generation_feedback_total",
                                    _labels(sentiment="negative")) == 1.0


def test_unknown_generation_id_is_counted_under_unknown_never_raised(monitor):
    monitor.record_feedback(positive=True, generation_id="never-seen")
    unknown = {k: "unknown" for k in ("model", "version", "route", "prompt_version", "tenant")}
    assert monitor.get_sample_value("inferwatch_generation_feedback_total",
                                    {"service": "chat", **unknown, "sentiment": "positive"}) == 1.0


def test_forgotten_ids_fall_out_of_the_bounded_lru():
    from inferwatch.sdk._generation_quality import GenerationIds, GenerationLabels

    ids = GenerationIds(capacity=2)
    for gid in ("a", "b", "c"):
        ids.remember(gid, GenerationLabels("/r", "m", "", "p", "t"))
    assert ids.get("a") is None and ids.get("c") is not None and len(ids) == 2


@pytest.mark.parametrize(("rating", "mood"), [(5, "positive"), (1, "negative"), (2.5, "neutral")])
def test_a_rating_is_a_sentiment_and_a_score(monitor, rating, mood):
    _generate(monitor, "g1")
    monitor.record_feedback(rating=rating, generation_id="g1")
    assert monitor.get_sample_value("inferwatch_generation_feedback_total", _labels(sentiment=mood)) == 1.0
    assert monitor.get_sample_value("inferwatch_generation_score_sum", _labels(name="rating")) == rating


def test_flags_on_the_tracked_generation(monitor):
    with monitor.track_generation(route=ROUTE, model="llama-3-8b", tenant="acme", prompt_version="p7") as g:
        g.flag("refused")
        g.flag("guardrail", detail="pii")
    assert monitor.get_sample_value("inferwatch_generation_flags_total",
                                    _labels(flag="refused", detail="")) == 1.0
    assert monitor.get_sample_value("inferwatch_generation_flags_total",
                                    _labels(flag="guardrail", detail="pii")) == 1.0


@pytest.mark.parametrize("call", [
    lambda m: m.record_score("judge", float("nan")),
    lambda m: m.record_score("judge", "0.5"),
    lambda m: m.record_score(None, 0.5),
    lambda m: m.record_feedback(positive="no"),
    lambda m: m.record_feedback(rating=9),
    lambda m: m.record_feedback(),
    lambda m: m.record_feedback(positive=True, generation_id=["unhashable"]),
])
def test_bad_input_is_counted_never_raised(monitor, call):
    call(monitor)  # no exception
    invalid = sum(monitor.get_sample_value("inferwatch_sdk_invalid_total", {"service": "chat", "kind": k})
                  or 0 for k in ("generation_score", "generation_feedback"))
    assert invalid == 1.0


def test_unknown_flag_is_counted_never_raised(monitor):
    with monitor.track_generation(route=ROUTE) as g:
        g.flag("bogus")
    assert monitor.get_sample_value("inferwatch_sdk_invalid_total",
                                    {"service": "chat", "kind": "generation_flag"}) == 1.0


def test_flag_details_are_bounded(monitor):
    with monitor.track_generation(route=ROUTE, model="llama-3-8b", tenant="acme", prompt_version="p7") as g:
        for i in range(40):
            g.flag("guardrail", detail=f"rule-{i}")
    assert monitor.get_sample_value("inferwatch_generation_flags_total",
                                    _labels(flag="guardrail", detail="<other>")) == 24.0


def test_tenant_budgets_are_exposed_for_the_spend_rules(monitor):
    monitor.set_tenant_budgets({"acme": 50.0, "globex": 5}, currency="EUR")
    assert monitor.get_sample_value("inferwatch_generation_tenant_daily_budget",
                                    {"service": "chat", "tenant": "acme", "currency": "EUR"}) == 50.0


@pytest.mark.parametrize("budgets", [{"acme": -1.0}, {"acme": float("inf")}, {"": 5.0}, {"acme": "5"}])
def test_a_bad_budget_is_a_config_error(monitor, budgets):
    from inferwatch import ConfigError

    with pytest.raises(ConfigError, match="set_tenant_budgets"):
        monitor.set_tenant_budgets(budgets)
