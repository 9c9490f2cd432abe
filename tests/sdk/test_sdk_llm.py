"""Issue 40 #4: what an LLM team reads besides latency: finish reasons, token lengths, goodput, cost."""

from __future__ import annotations

import pytest

from inferwatch._exceptions import ConfigError
from inferwatch.model import SimulatedClock
from inferwatch.sdk import Monitor, Price

ROUTE = "/v1/chat/completions"
LABELS = {"service": "chat", "model": "llama-3-8b", "version": "v1", "route": ROUTE}
SVC = {"service": "chat", "model": "llama-3-8b", "version": "v1"}


def monitor() -> Monitor:
    return Monitor("chat", "llama-3-8b", "v1", clock=SimulatedClock(0.0))


def test_finish_reasons_token_lengths_and_goodput() -> None:
    with monitor() as m:
        m.set_generation_targets(ttft_s=0.5, tpot_s=0.05)
        # (status, ttft, duration, in, out, finish): good, slow first token, slow tokens, one token, error
        for status, ttft, duration, tokens_in, tokens_out, finish in (
                (200, 0.2, 1.2, 30, 21, "stop"),     # tpot 0.05: good (on the target)
                (200, 0.9, 1.9, 30, 21, "length"),   # first token late
                (200, 0.2, 2.2, 500, 21, "stop"),    # tpot 0.1: tokens slow
                (200, 0.3, 0.3, 3, 1, ""),           # one token, no tpot: good; reason unknown
                (500, None, 0.1, 3, 0, ""),          # an error is never good
                (499, 0.2, 0.5, 3, 5, "")):          # the client went away
            m.record_generation(ROUTE, status, ttft, duration, tokens_in, tokens_out, finish_reason=finish)
        m.flush()
        finish = "inferwatch_generation_finish_reasons_total"
        reasons = {r: m.get_sample_value(finish, {**LABELS, "finish_reason": r})
                   for r in ("stop", "length", "unknown", "error", "abort")}
        assert reasons == {"stop": 2, "length": 1, "unknown": 1, "error": 1, "abort": 1}
        assert m.get_sample_value("inferwatch_generation_good_requests_total", LABELS) == 2
        assert m.get_sample_value("inferwatch_generation_requests_total", {**LABELS, "code": "200"}) == 4
        hist = "inferwatch_generation_request_input_tokens_bucket"
        assert m.get_sample_value(hist, {**LABELS, "le": "4.0"}) == 3
        assert m.get_sample_value(hist, {**LABELS, "le": "64.0"}) == 5
        assert m.get_sample_value("inferwatch_generation_request_output_tokens_count", LABELS) == 6
        target = "inferwatch_generation_target_seconds"
        assert m.get_sample_value(target, {**SVC, "target": "time_to_first_token"}) == 0.5
        assert m.get_sample_value(target, {**SVC, "target": "time_per_output_token"}) == 0.05


def test_cost_by_tenant_from_the_price_table() -> None:
    with monitor() as m:
        m.set_prices({"llama-3-8b": Price(input_per_million=0.2, output_per_million=0.6, currency="USD")})
        with m.track_generation(route=ROUTE, input_tokens=1000, tenant="acme") as g:
            g.tokens(500)
        m.record_generation(ROUTE, 200, 0.1, 1.0, 2000, 1000, tenant="acme")
        m.record_generation(ROUTE, 200, 0.1, 1.0, 10, 10, model="unpriced", tenant="acme")
        m.record_generation(ROUTE, 200, 0.1, 1.0, 10, 10)
        m.flush()
        usd = {**SVC, "tenant": "acme", "currency": "USD"}
        cost = m.get_sample_value("inferwatch_generation_cost_total", usd)
        # (1000 + 2000) x 0.2 + (500 + 1000) x 0.6 per million tokens
        assert cost == pytest.approx((3000 * 0.2 + 1500 * 0.6) / 1e6)
        tenants = "inferwatch_generation_tenant_requests_total"
        assert m.get_sample_value(tenants, {**SVC, "tenant": "acme"}) == 2
        assert m.get_sample_value(tenants, {**SVC, "tenant": "default"}) == 1
        assert m.get_sample_value(tenants, {**SVC, "model": "unpriced", "tenant": "acme"}) == 1
        assert m.get_sample_value("inferwatch_generation_cost_total",
                                  {**SVC, "model": "unpriced", "tenant": "acme", "currency": "USD"}) is None


def test_engine_gauges_are_the_last_values_and_counts_add_up() -> None:
    with monitor() as m:
        m.record_engine(running=4, waiting=2, kv_cache_usage=0.5, preemptions=1, prefix_cache_queries=100,
                        prefix_cache_hits=40)
        m.record_engine(running=6, kv_cache_usage=0.75, preemptions=2, prefix_cache_queries=50,
                        prefix_cache_hits=10)
        m.record_engine(running=-1)                      # invalid: counted, not raised
        m.record_engine(kv_cache_usage=1.5)              # a ratio over 1: invalid
        m.flush()
        get = m.get_sample_value
        assert get("inferwatch_engine_requests_running", SVC) == 6
        assert get("inferwatch_engine_requests_waiting", SVC) == 2  # not reported again: the last value
        assert get("inferwatch_engine_kv_cache_usage_ratio", SVC) == 0.75
        assert get("inferwatch_engine_preemptions_total", SVC) == 3
        assert get("inferwatch_engine_prefix_cache_hits_total", SVC) == 50
        assert get("inferwatch_engine_prefix_cache_queries_total", SVC) == 150
        assert get("inferwatch_sdk_invalid_total", {"service": "chat", "kind": "engine"}) == 2


@pytest.mark.parametrize(("call", "message"), [
    (lambda m: m.set_generation_targets(ttft_s=0), "ttft_s must be positive seconds, got 0"),
    (lambda m: m.set_prices({"llama": Price(-1.0, 1.0)}), "set_prices: 'llama'"),
    (lambda m: m.set_prices({"llama": (0.2, 0.6)}), "expected Price(input_per_million"),
])
def test_bad_settings_fail_fast_with_a_clear_error(call, message) -> None:  # type: ignore[no-untyped-def]
    with monitor() as m, pytest.raises(ConfigError, match=None) as err:
        call(m)
    assert message in str(err.value)
