"""The asynchronous judge against a fake OpenAI-compatible server on loopback (real HTTP).

Scores come back as ``record_score`` joined to the generation; an outage (500, hangs past
the timeout, answers without a number), a full queue and a spent budget are the judge's
self-metrics, never the service's; the key goes in the header only. The monitor's clock is
simulated, so the rate limit and the backoff advance it instead of waiting.
"""

from __future__ import annotations

import logging
import random

import pytest
from tests._fake_openai import fake_judge
from tests._process import poll_until

from inferwatch._exceptions import ConfigError
from inferwatch.model import SimulatedClock
from inferwatch.sdk import JudgeConfig, Monitor
from inferwatch.sdk._judge import parse_score

ROUTE = "/v1/chat/completions"
KEY = "sk-test-abcdef123456"


@pytest.fixture
def judge_server():
    with fake_judge(lambda user: 0.25 if "q2" in user else 0.85, key=KEY) as j:
        yield j


def _monitor(url: str, **cfg) -> Monitor:
    m = Monitor(service="chat", version="v1", clock=SimulatedClock(1_000_000.0))
    m.set_judge(JudgeConfig(base_url=url, model="judge-7b", api_key=KEY,
                            **{"sample": 1.0, "timeout_s": 5.0, **cfg}), rng=random.Random(1))
    return m


def _outcome(m: Monitor, outcome: str) -> float:
    found = m.get_sample_value("inferwatch_judge_requests_total", {"service": "chat", "outcome": outcome})
    return found or 0.0


def _generate(m: Monitor, gid: str, model: str = "llama-3-8b") -> None:
    with m.track_generation(route=ROUTE, model=model, tenant="acme", prompt_version="p7",
                            generation_id=gid) as g:
        g.tokens(3)


def test_scores_come_back_joined_to_the_generation_in_openais_shape(judge_server):
    m = _monitor(judge_server.url, rate_per_s=100.0)
    try:
        _generate(m, "g1")
        _generate(m, "g2", model="llama-3-8b-q2")
        assert m.judge("What is 2+2?", "4, from llama-3-8b", generation_id="g1")
        assert m.judge("What is 2+2?", "5, from q2", generation_id="g2")
        poll_until(lambda: _outcome(m, "ok") == 2, "two judged")
        labels = {"service": "chat", "version": "v1", "route": ROUTE, "prompt_version": "p7",
                  "tenant": "acme", "name": "judge"}
        assert m.get_sample_value("inferwatch_generation_score_sum", {**labels, "model": "llama-3-8b"}) == \
            pytest.approx(0.85)
        assert m.get_sample_value("inferwatch_generation_score_sum",
                                  {**labels, "model": "llama-3-8b-q2"}) == pytest.approx(0.25)
        assert judge_server.bad == []  # path, Bearer key, model, messages: OpenAI's request shape
        ask = judge_server.asked[0]
        assert ask["model"] == "judge-7b" and [x["role"] for x in ask["messages"]] == ["system", "user"]
        assert "What is 2+2?" in ask["messages"][1]["content"] and "4, from llama-3-8b" in \
            ask["messages"][1]["content"]
        tokens = m.get_sample_value("inferwatch_judge_tokens_total",
                                    {"service": "chat", "type": "completion"})
        assert tokens == 2.0  # from the responses' usage
    finally:
        m.close()


@pytest.mark.parametrize(("mode", "outcome", "asks"), [
    ("500", "error", 3),       # retried twice with backoff, then counted
    ("hang", "timeout", 3),    # no answer within timeout_s: retried, then counted
    ("garbage", "invalid", 1),  # an answer without a number: not retried
])
def test_an_outage_is_the_judges_self_metric_not_the_services(judge_server, mode, outcome, asks, caplog):
    judge_server.mode, judge_server.hang_s = mode, 1.0
    m = _monitor(judge_server.url, timeout_s=0.2, retries=2, backoff_s=0.5)
    try:
        _generate(m, "g1")
        with caplog.at_level(logging.WARNING):
            m.judge("q", "a", generation_id="g1")
            poll_until(lambda: _outcome(m, outcome) == 1, f"counted as {outcome}")
        assert len(judge_server.asked) == asks
        assert m.get_sample_value("inferwatch_generation_score_count",
                                  {"service": "chat", "model": "llama-3-8b", "version": "v1", "route": ROUTE,
                                   "prompt_version": "p7", "tenant": "acme", "name": "judge"}) is None
        # the service's own series know nothing of it: no request, no error
        assert m.get_sample_value("inferwatch_generation_requests_total",
                                  {"service": "chat", "model": "llama-3-8b", "version": "v1", "route": ROUTE,
                                   "code": "500"}) is None
        assert KEY not in caplog.text and KEY not in repr(m.judge_worker.config)
    finally:
        m.close()


def test_a_full_queue_drops_and_counts(judge_server):
    judge_server.mode, judge_server.hang_s = "hang", 3.0
    m = _monitor(judge_server.url, timeout_s=2.0, retries=0, queue_size=1)
    try:
        m.judge("q", "a", generation_id="first")
        poll_until(lambda: bool(judge_server.asked), "the judge busy with the first")
        sent = [m.judge("q", "a", generation_id=f"g{i}") for i in range(5)]
        assert sent.count(True) <= 1 and _outcome(m, "dropped") >= 4  # never blocked the caller
    finally:
        m.close(0.1)


def test_the_daily_token_budget_stops_calls_until_the_next_day(judge_server):
    m = _monitor(judge_server.url, daily_tokens=10, rate_per_s=100.0)
    try:
        m.judge("q " * 20, "a", generation_id="g1")  # ~30 tokens: the day's budget spent
        poll_until(lambda: _outcome(m, "ok") == 1, "judged")
        m.judge("q", "a", generation_id="g2")
        poll_until(lambda: _outcome(m, "budget") == 1, "skipped: budget")
        assert len(judge_server.asked) == 1
        m._clock.advance(86400.0)
        m.judge("q", "a", generation_id="g3")
        poll_until(lambda: _outcome(m, "ok") == 2, "judged the next day")
    finally:
        m.close()


def test_the_rate_limit_spaces_requests_on_the_monitors_clock(judge_server):
    m = _monitor(judge_server.url, rate_per_s=0.5)
    try:
        start = m._clock.monotonic()
        for i in range(4):
            m.judge("q", "a", generation_id=f"g{i}")
        poll_until(lambda: _outcome(m, "ok") == 4, "all judged")
        assert m._clock.monotonic() - start >= 6.0  # 4 requests at 0.5 a second: 3 gaps of 2 s
    finally:
        m.close()


def test_sampling_and_no_judge_are_no_ops(judge_server):
    m = _monitor(judge_server.url, sample=0.0)
    try:
        assert not m.judge("q", "a", generation_id="g1")
        assert m.get_sample_value("inferwatch_judge_queue_depth", {"service": "chat"}) == 0.0
    finally:
        m.close()
    plain = Monitor(service="chat")
    try:
        assert plain.judge("q", "a") is False and plain.judge_worker is None
        plain.set_judge(JudgeConfig(base_url=judge_server.url, model="m", sample=0.0))
        with pytest.raises(ConfigError, match="judge already"):
            plain.set_judge(JudgeConfig(base_url=judge_server.url, model="m"))
    finally:
        plain.close()
    assert judge_server.asked == []


def test_the_key_comes_from_the_environment(judge_server, monkeypatch):
    monkeypatch.setenv("INFERWATCH_JUDGE_API_KEY", KEY)
    m = Monitor(service="chat", clock=SimulatedClock(0.0))
    try:
        m.set_judge(JudgeConfig(base_url=judge_server.url, model="m", sample=1.0))
        m.judge("q", "a")
        poll_until(lambda: _outcome(m, "ok") == 1, "judged")
        assert judge_server.bad == []
        assert KEY not in repr(m.judge_worker.config)
    finally:
        m.close()


@pytest.mark.parametrize(("bad", "field"), [
    ({"base_url": "api.openai.com"}, "base_url"), ({"sample": 1.5}, "sample"),
    ({"rate_per_s": 0}, "rate_per_s"),
    ({"queue_size": 0}, "queue_size"), ({"retries": -1}, "retries"), ({"model": ""}, "model"),
])
def test_bad_config_names_the_field(bad, field):
    with pytest.raises(ConfigError, match=f"judge.{field}"):
        JudgeConfig(**{"base_url": "http://x/v1", "model": "m", **bad})


def test_parse_score():
    assert parse_score("0.75") == 0.75 and parse_score('{"score": 1}') == 1.0
    assert parse_score("Score: 3/5") == 3.0 and parse_score("nan") is None and parse_score(None) is None
