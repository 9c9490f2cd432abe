"""The default pack's round shares what its rules compute alike, and alerts exactly as rules evaluated
one by one do (each rule in an evaluator of its own shares nothing with the others)."""

from __future__ import annotations

from tests.rules._helpers import load

from inferwatch.model import SimulatedClock
from inferwatch.promql import plan_shared
from inferwatch.rules import Evaluator, default_rule_pack
from inferwatch.rules._evaluator import _round_exprs

M = 60.0
LE = (("0.1", 0.5), ("0.25", 0.7), ("0.5", 0.9), ("1", 0.97), ("2.5", 0.995), ("+Inf", 1.0))


def _series() -> dict[str, str]:
    out: dict[str, str] = {}
    for s in range(6):
        for i in range(4):  # four replicas a service: the peer rules judge them
            lab = f'service="svc{s}", model="m", version="v1", instance="10.0.0.{i}:80"'
            rate = 0 if s == 2 else 600  # requests a minute; svc2 stops at minute 20 (the idle hold)
            head = f"0+600x20 12600+{rate}x39"
            err = "0+900x60" if s == 0 else "0+1x20 20+0x39" if s == 2 else "0+1x60"  # svc0: 503 to 60 %
            out[f'inferwatch_requests_total{{{lab}, code="200"}}'] = head
            out[f'inferwatch_requests_total{{{lab}, code="503"}}'] = err
            slow = 0.3 if (s == 1 or (s == 3 and i == 0)) else 0.0  # svc1 slow; one slow replica of svc3
            for le, share in LE:
                sh = share if le == "+Inf" else max(share - slow, 0.0)
                out[f'inferwatch_request_duration_seconds_bucket{{{lab}, le="{le}"}}'] = f"0+{600 * sh:g}x60"
    return out


def test_the_default_pack_shares_its_repeated_subexpressions() -> None:
    plan = plan_shared(_round_exprs(default_rule_pack()))
    assert len(plan) >= 20  # the request rates, the latency signal, the generation windows, ...


def test_a_shared_round_alerts_as_rules_evaluated_one_by_one() -> None:
    store = load(_series(), M)
    pack = default_rule_pack()
    together = Evaluator(pack, store, clock=SimulatedClock(0))
    alone = [Evaluator([r], store, clock=SimulatedClock(0)) for r in pack]
    fired: set[str] = set()
    for minute in range(5, 60, 3):
        t = minute * M
        together.evaluate(t)
        for ev in alone:
            ev.evaluate(t)
        want = sorted((a.alertname, a.labels, a.state, a.value) for ev in alone for a in ev.active())
        got = sorted((a.alertname, a.labels, a.state, a.value) for a in together.active())
        assert got == want, minute
        fired |= {a.alertname for a in together.active()}
    # the story reached the rules that share: errors, unavailability, latency, the idle hold, peers
    assert {"HighErrorRate", "ServiceUnavailable", "HighP99Latency", "TrafficStopped", "ReplicaSlow"} <= fired
