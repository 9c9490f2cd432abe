"""Confirmed phone calls on simulated time: rounds, an answer acknowledges, no answer escalates at once.

The voice receiver is the real Aliyun notifier, signing its requests, against the Dyvmsapi
fake on loopback (``SingleCallByTts`` and ``QueryCallDetailByCallId``); the pipeline's steps
and history are the real ones.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import pytest

from alerting.conftest import alert
from alerting.fakes import FakeService, Handler
from alerting.fakes_cn import FakeAliyun, FakeTencent
from inferwatch._exceptions import ConfigError
from inferwatch.alerting import Pipeline, RecordingNotifier
from inferwatch.alerting.notify import tencent_call_report
from inferwatch.alerting.oncall import MAX_CHECKS, Call, CallOutcome, CallWatch
from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock

Fake = Callable[[Handler], FakeService]
T0 = 1_796_000_000.0  # 2026-11-29, so the signatures' timestamps are plausible
AK_ID, AK_SECRET = "LTAI5tFakeAccessKeyId", "FakeAccessKeySecret0123456789ab"
ENGINEER = "13800000000"


def aliyun_phone(url: str, rounds: int) -> str:
    return (f"{{name: phone, type: aliyun_voice, access_key_id: {AK_ID}, access_key_secret: {AK_SECRET}, "
            f"tts_code: TTS_100001, to: ['{ENGINEER}'], url: '{url}', confirm: true, rounds: {rounds}, "
            "round_interval: 1m}")


def config(phone: str) -> str:
    return f"""
alerting:
  default_actions: false
  receivers:
    - {phone}
    - {{name: lead, type: terminal}}
    - {{name: director, type: terminal}}
  escalations:
    - name: p0
      steps:
        - {{after: 0s, notify: [phone]}}
        - {{after: 15m, notify: [lead]}}
        - {{after: 30m, notify: [director]}}
  route: {{receiver: terminal, group_wait: 0s, group_interval: 1m, repeat_interval: 4h,
          routes: [{{matchers: ['tier="P0"'], receiver: phone, escalation: p0}}]}}
"""


Made = tuple[Pipeline, FakeAliyun, dict[str, RecordingNotifier], SimulatedClock]


def make(fake: Fake, rounds: int = 2) -> Made:
    clock = SimulatedClock(T0)
    api = FakeAliyun(AK_ID, AK_SECRET, clock.now, "SingleCallByTts")
    cfg = parse_config(config(aliyun_phone(fake(api).url, rounds))).alerting
    recs = {name: RecordingNotifier(name) for name in ("lead", "director", "terminal")}
    p = Pipeline(cfg, clock=clock, notifiers=recs, actions=[], rng=random.Random(1))
    return p, api, recs, clock


def run(p: Pipeline, clock: SimulatedClock, until: float, step: float = 10.0) -> None:
    while clock.now() <= T0 + until:
        p.send([alert("ServiceDown", start=T0, tier="P0")], now=clock.now())
        p.tick(clock.now())
        clock.advance(step)


def stepped(p: Pipeline) -> list[tuple[int, float]]:
    return [(e.detail["step"], e.t - T0) for e in p.oncall.history.query(kinds=("escalated",))]


def test_an_unanswered_call_is_called_again_per_its_rounds_then_the_next_step_at_once(fake: Fake) -> None:
    p, api, recs, clock = make(fake, rounds=3)
    run(p, clock, 20 * 60)
    # 3 rounds a minute apart, each asked about a minute after it was placed, all unanswered
    assert [n for n, _ in api.sent] == [ENGINEER] * 3
    assert len(api.queries) == 3 and len(set(api.queries)) == 3
    # the lead was told at 3 min (after the third round), not at the step's 15 min
    assert stepped(p) == [(1, 0.0), (2, 180.0)]
    (told,) = recs["lead"].sent
    assert told.step == 2 and "did not answer 3 calls" in told.notes[0]
    (event,) = p.oncall.history.query(kinds=("unanswered",))
    assert event.t == T0 + 180 and event.detail["number"] == ENGINEER and event.detail["rounds"] == 3
    assert event.detail["record"]["stateDesc"] == "用户未接听"
    # the director's step keeps its own delay (30 min): nothing before then
    assert not recs["director"].sent


def test_an_answered_call_acknowledges_the_group_and_stops_the_escalation(fake: Fake) -> None:
    p, api, recs, clock = make(fake, rounds=3)
    api.answers[ENGINEER] = [False, True]  # the second round is answered
    run(p, clock, 45 * 60)
    assert [n for n, _ in api.sent] == [ENGINEER] * 2  # no third round
    assert not recs["lead"].sent and not recs["director"].sent  # escalation stopped
    assert stepped(p) == [(1, 0.0)]
    (answered,) = p.oncall.history.query(kinds=("answered",))
    assert answered.t == T0 + 120 and answered.detail["by"] == f"{ENGINEER} (aliyun_voice[phone])"
    assert answered.detail["round"] == 2 and answered.detail["record"]["duration"] == "15"
    (ack,) = p.oncall.history.query(kinds=("acknowledged",))  # through the acknowledgement path
    assert ack.t == T0 + 120 and ack.detail["by"] == answered.detail["by"]
    assert not p.oncall.history.query(kinds=("unanswered",))
    (state,) = p.group_states(clock.now())
    assert state["ack"]["by"] == answered.detail["by"]  # type: ignore[index]
    # MTTA counts the answer
    (row,) = p.oncall.history.response_times(T0 - 1, T0 + 3600)
    assert row["mtta_seconds"] == 120.0


def test_a_resolved_group_is_not_called_again(fake: Fake) -> None:
    p, api, recs, _ = make(fake, rounds=3)
    p.send([alert("ServiceDown", start=T0, tier="P0")], now=T0)
    p.tick(T0)
    p.send([alert("ServiceDown", start=T0, end=T0 + 30, tier="P0")], now=T0 + 30)
    for t in range(40, 600, 10):
        p.tick(T0 + t)
    assert [n for n, _ in api.sent] == [ENGINEER] and not api.queries
    assert not recs["lead"].sent and p.calls.pending() == []


class _Slow:
    """A platform that never has the call's record."""

    def __init__(self) -> None:
        self.asked = 0

    def outcome(self, call: Call) -> CallOutcome:
        self.asked += 1
        return CallOutcome("pending")

    def redial(self, call: Call) -> str:
        raise AssertionError("one round only")


class _Outcomes:
    def __init__(self) -> None:
        self.given_up: list[tuple[Call, float]] = []

    def wanted(self, key: str, now: float) -> bool:
        return True

    def answered(self, call: Call, out: CallOutcome, now: float) -> None:
        raise AssertionError("never answered")

    def unanswered(self, call: Call, out: CallOutcome, now: float) -> None:
        self.given_up.append((call, now))


def test_a_call_without_a_record_counts_as_unanswered_after_max_checks() -> None:
    phone, outcomes = _Slow(), _Outcomes()
    watch = CallWatch(outcomes)
    watch.placed(Call("r", ENGINEER, "c1", ("g",), 0.0, phone, interval=60.0))
    for t in itertools.count(0, 30):
        watch.tick(float(t))
        if outcomes.given_up or t > 3600:
            break
    assert phone.asked == MAX_CHECKS
    assert [now for _, now in outcomes.given_up] == [60.0 * MAX_CHECKS]
    assert watch.next_wakeup() is None


@pytest.mark.parametrize(("extra", "message"), [
    ("rounds: 2", "rounds > 1 needs confirm: true"),
    ("confirm: true, round_interval: 10s", "round_interval"),
])
def test_bad_round_settings_are_clear_errors(extra: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(f"""
alerting:
  receivers: [{{name: phone, type: aliyun_voice, to: ['{ENGINEER}'], {extra}}}]
  route: {{receiver: phone}}
""")


SID, SKEY = "AKIDfakeSecretId0123456789", "fakeSecretKey0123456789abcdef"


def tencent(fake: Fake, rounds: int) -> tuple[Pipeline, FakeTencent, dict[str, RecordingNotifier],
                                              SimulatedClock]:
    clock = SimulatedClock(T0)
    api = FakeTencent(SID, SKEY, clock.now, "vms")
    phone = (f"{{name: phone, type: tencent_voice, secret_id: {SID}, secret_key: {SKEY}, "
             f"template_id: '1234568', voice_sdk_app_id: '1400000001', to: ['+86{ENGINEER}'], "
             f"url: '{fake(api).url}', confirm: true, rounds: {rounds}}}")
    cfg = parse_config(config(phone)).alerting
    recs = {name: RecordingNotifier(name) for name in ("lead", "director", "terminal")}
    return Pipeline(cfg, clock=clock, notifiers=recs, actions=[], rng=random.Random(1)), api, recs, clock


def test_tencent_status_callbacks_answer_or_escalate(fake: Fake) -> None:
    p, api, recs, clock = tencent(fake, rounds=2)
    run(p, clock, 0)
    (first,) = api.call_ids
    clock.advance(30)
    # a callback for another number, or an unknown call, settles nothing
    wrong = api.status_callback(first, answered=True)
    wrong["voiceprompt_callback"]["mobile"] = "13900000000"
    assert (bad := tencent_call_report(wrong)) is not None and p.calls.report(*bad) is False
    assert tencent_call_report({"other": {}}) is None
    # not answered: called again at once on the next tick (the callback wakes the runner)
    no = tencent_call_report(api.status_callback(first, answered=False))
    assert no is not None and p.calls.report(*no)
    run(p, clock, 40)
    assert len(api.call_ids) == 2 and not recs["lead"].sent
    # the second round is answered: acknowledged by that number, no step 2
    clock.advance(20)
    second = tencent_call_report(api.status_callback(api.call_ids[1], answered=True))
    assert second is not None and p.calls.report(*second)
    run(p, clock, 20 * 60)
    assert not recs["lead"].sent and len(api.call_ids) == 2
    (answered,) = p.oncall.history.query(kinds=("answered",))
    assert answered.detail["by"] == f"+86{ENGINEER} (tencent_voice[phone])" and answered.detail["round"] == 2
    assert answered.detail["record"]["result"] == "0"


def test_tencent_without_a_callback_counts_as_unanswered_and_escalates(fake: Fake) -> None:
    p, api, recs, clock = tencent(fake, rounds=1)
    run(p, clock, 20 * 60)
    assert len(api.call_ids) == 1
    (told,) = recs["lead"].sent  # after MAX_CHECKS minutes without news, not after the step's 15 min
    (event,) = p.oncall.history.query(kinds=("unanswered",))
    assert told.step == 2 and event.t == T0 + 60 * MAX_CHECKS


def test_an_answer_is_told_to_the_chat_that_carried_the_page_but_never_called_through(fake: Fake) -> None:
    # rule: the acknowledgement shows on every channel that carried the page; a call to say so would
    # wake someone for nothing
    clock = SimulatedClock(T0)
    api = FakeAliyun(AK_ID, AK_SECRET, clock.now, "SingleCallByTts")
    text = config(aliyun_phone(fake(api).url, 2)).replace("notify: [phone]", "notify: [phone, team]")
    text = text.replace("- {name: lead,", "- {name: team, type: terminal}\n    - {name: lead,")
    cfg = parse_config(text).alerting
    recs = {name: RecordingNotifier(name) for name in ("team", "lead", "director", "terminal")}
    p = Pipeline(cfg, clock=clock, notifiers=recs, actions=[], rng=random.Random(1))
    api.answers[ENGINEER] = [True]
    run(p, clock, 10 * 60)
    assert [n for n, _ in api.sent] == [ENGINEER]  # one call, none to say it was answered
    page, told = recs["team"].sent
    assert page.step == 1 and told.kind == "acknowledged" and told.groups[0].key == page.groups[0].key
    assert told.notes == (f"Acknowledged by {ENGINEER} (aliyun_voice[phone]): answered the phone call",)
