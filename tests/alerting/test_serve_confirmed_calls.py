"""`inferwatch serve --speed 30` calling through the Dyvmsapi and VMS fakes: rounds, answers, escalation.

Two P0 groups page two engineers by Aliyun voice with ``confirm: true``. One never
answers: after its 2 rounds (90 s apart) the next escalation step (the lead's webhook,
due only after 1 h) goes at once. The other answers the first call: the group is
acknowledged by that number and the history shows ``answered``. A third pages by
Tencent voice, and Tencent's status callback (posted, without a token, to the
server) says it was answered. Waits are bounded polls of the server's own API.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.export._engines import poll
from tests.server._proc import start_serve

from alerting.fakes import FakeService
from alerting.fakes_cn import FakeAliyun, FakeTencent
from alerting.test_serve_oncall import BOUND_S, TOKEN, Hooks, _stop

pytestmark = pytest.mark.slow
SPEED = 30.0
AK_ID, AK_SECRET = "LTAI5tFakeAccessKeyId", "FakeAccessKeySecret0123456789ab"
SILENT, PROMPT, TX = "13800000001", "13800000002", "+8613800000003"
SID, SKEY = "AKIDfakeSecretId0123456789", "fakeSecretKey0123456789abcdef"


def _config(tmp_path: Path, api: str, hooks: str, vms: str) -> Path:
    cfg = tmp_path / "inferwatch.yml"
    phone = (f"type: aliyun_voice, access_key_id: {AK_ID}, access_key_secret: {AK_SECRET}, "
             f"tts_code: TTS_100001, url: '{api}', confirm: true, rounds: 2, round_interval: 90s")
    cfg.write_text(f"""
server: {{data_dir: '{tmp_path / "data"}', api_token: {TOKEN}}}
rules: {{default_pack: false}}
alerting:
  default_actions: false
  resolve_timeout: 1h
  receivers:
    - {{name: silent, to: ['{SILENT}'], {phone}}}
    - {{name: prompt, to: ['{PROMPT}'], {phone}}}
    - {{name: lead, type: webhook, url: '{hooks}/lead'}}
    - {{name: tx, type: tencent_voice, secret_id: {SID}, secret_key: {SKEY}, template_id: '1234568',
       voice_sdk_app_id: '1400000001', to: ['{TX}'], url: '{vms}', confirm: true}}
  escalations:
    - {{name: silent, steps: [{{after: 0s, notify: [silent]}}, {{after: 1h, notify: [lead]}}]}}
    - {{name: prompt, steps: [{{after: 0s, notify: [prompt]}}, {{after: 1h, notify: [lead]}}]}}
    - {{name: tx, steps: [{{after: 0s, notify: [tx]}}, {{after: 1h, notify: [lead]}}]}}
  route:
    receiver: lead
    group_by: [alertname]
    group_wait: 0s
    routes: [{{matchers: ['alertname="Silent"'], receiver: silent, escalation: silent}},
             {{matchers: ['alertname="Prompt"'], receiver: prompt, escalation: prompt}},
             {{matchers: ['alertname="Tencent"'], receiver: tx, escalation: tx}}]
""")
    return cfg


def _alert(name: str) -> dict[str, object]:
    return {"status": "firing", "labels": {"alertname": name, "service": "ranker", "tier": "P0"},
            "annotations": {"summary": f"{name} on ranker"}}


def test_serve_calls_again_escalates_the_unanswered_and_acknowledges_the_answered(tmp_path: Path) -> None:
    start = time.time()
    anchor = [start, start]  # the fakes' clock follows the server's (signatures carry its time)

    def clock() -> float:
        return anchor[0] + (time.time() - anchor[1]) * SPEED

    api, vms = FakeAliyun(AK_ID, AK_SECRET, clock, "SingleCallByTts"), FakeTencent(SID, SKEY, clock, "vms")
    api.answers[PROMPT] = [True]
    fake, tx, hooks = FakeService(api).start(), FakeService(vms).start(), Hooks()
    cfg = _config(tmp_path, fake.url, hooks.url, tx.url)
    proc, url = start_serve(cfg, "--speed", f"{SPEED:g}", "--start", f"{start:.0f}")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with httpx.Client(timeout=BOUND_S, headers=auth) as c:
            now = c.get(f"{url}/api/v1/query", params={"query": "time()"}).json()["data"]["result"][0]
            anchor[:] = [float(now), time.time()]
            r = c.post(f"{url}/api/v1/alertmanager", json={"version": "4", "alerts": [
                _alert("Silent"), _alert("Prompt"), _alert("Tencent")]})
            assert r.status_code == 200
            (call_id,) = poll(lambda: list(vms.call_ids), timeout=BOUND_S, what="the Tencent call")
            with httpx.Client(timeout=BOUND_S) as tencent:  # Tencent sends no token
                took = tencent.post(f"{url}/api/v1/alerts/voice/tencent",
                                    json=vms.status_callback(call_id, answered=True))
                assert took.status_code == 200 and took.json() == {"result": 0, "errmsg": "OK"}
                again = tencent.post(f"{url}/api/v1/alerts/voice/tencent", json={"voiceprompt_callback": {
                    "callid": "not-a-call", "result": "0", "mobile": TX[3:], "nationcode": "86"}})
                assert again.json()["result"] == 1
            assert hooks.wait(lambda got: any(p == "/lead" for p, _ in got))  # long before the 1 h
            events = poll(lambda: _history(c, url), timeout=BOUND_S, what="answered and unanswered calls")
            groups = {g["labels"]["alertname"]: g for g in c.get(f"{url}/api/v1/alerts/oncall-groups").json()}
    finally:
        err = _stop(proc)
        fake.stop()
        tx.stop()
        hooks.service.stop()
    assert "Traceback" not in err, err
    assert AK_SECRET not in err
    assert [n for n, _ in api.sent if n == SILENT] == [SILENT, SILENT]  # two rounds
    assert [n for n, _ in api.sent if n == PROMPT] == [PROMPT]  # answered: no second round
    assert hooks.steps("/lead") == [("Silent", 2)]
    by_kind = {(e["kind"], e["labels"]["alertname"]): e for e in events}
    silent = by_kind[("unanswered", "Silent")]
    assert silent["detail"]["number"] == SILENT and silent["detail"]["rounds"] == 2
    lead = by_kind[("escalated", "Silent")]  # the last one: step 2
    assert lead["detail"]["step"] == 2
    assert lead["t"] - silent["t"] < 1.0 and lead["t"] - start < 3600  # at once, not after 1 h
    answered = by_kind[("answered", "Prompt")]
    assert answered["detail"]["by"] == f"{PROMPT} (aliyun_voice[prompt])"
    assert by_kind[("acknowledged", "Prompt")]["detail"]["by"] == answered["detail"]["by"]
    assert groups["Prompt"]["ack"]["by"] == answered["detail"]["by"]
    assert groups["Prompt"]["escalation"]["step"] == 1 and groups["Silent"]["escalation"]["step"] == 2
    told = by_kind[("answered", "Tencent")]
    assert told["detail"]["by"] == f"{TX} (tencent_voice[tx])" and told["detail"]["record"]["result"] == "0"
    assert groups["Tencent"]["ack"]["by"] == told["detail"]["by"]


def _history(c: httpx.Client, url: str) -> list[dict[str, Any]] | None:
    events: list[dict[str, Any]] = c.get(f"{url}/api/v1/alerts/history").json()["data"]
    done = {(e["kind"], e["labels"].get("alertname")) for e in events}
    want = {("answered", "Prompt"), ("answered", "Tencent"), ("unanswered", "Silent")}
    return events if want <= done else None
