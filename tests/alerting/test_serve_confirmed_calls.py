"""`inferwatch serve --speed 30` calling through the Dyvmsapi fake: rounds, answer, escalation at once.

Two P0 groups page two engineers by Aliyun voice with ``confirm: true``. One never
answers: after its 2 rounds (90 s apart) the next escalation step (the lead's webhook,
due only after 1 h) goes at once. The other answers the first call: the group is
acknowledged by that number and the history shows ``answered``. Waits are bounded
polls of the server's own history API.
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
from alerting.fakes_cn import FakeAliyun
from alerting.test_serve_oncall import BOUND_S, TOKEN, Hooks, _stop

pytestmark = pytest.mark.slow
SPEED = 30.0
AK_ID, AK_SECRET = "LTAI5tFakeAccessKeyId", "FakeAccessKeySecret0123456789ab"
SILENT, PROMPT = "13800000001", "13800000002"


def _config(tmp_path: Path, api: str, hooks: str) -> Path:
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
  escalations:
    - {{name: silent, steps: [{{after: 0s, notify: [silent]}}, {{after: 1h, notify: [lead]}}]}}
    - {{name: prompt, steps: [{{after: 0s, notify: [prompt]}}, {{after: 1h, notify: [lead]}}]}}
  route:
    receiver: lead
    group_by: [alertname]
    group_wait: 0s
    routes: [{{matchers: ['alertname="Silent"'], receiver: silent, escalation: silent}},
             {{matchers: ['alertname="Prompt"'], receiver: prompt, escalation: prompt}}]
""")
    return cfg


def _alert(name: str) -> dict[str, object]:
    return {"status": "firing", "labels": {"alertname": name, "service": "ranker", "tier": "P0"},
            "annotations": {"summary": f"{name} on ranker"}}


def test_serve_calls_again_escalates_the_unanswered_and_acknowledges_the_answered(tmp_path: Path) -> None:
    start = time.time()
    api = FakeAliyun(AK_ID, AK_SECRET, lambda: start + (time.time() - start) * SPEED, "SingleCallByTts")
    api.answers[PROMPT] = [True]
    fake, hooks = FakeService(api).start(), Hooks()
    cfg = _config(tmp_path, fake.url, hooks.url)
    proc, url = start_serve(cfg, "--speed", f"{SPEED:g}", "--start", f"{start:.0f}")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with httpx.Client(timeout=BOUND_S, headers=auth) as c:
            r = c.post(f"{url}/api/v1/alertmanager", json={"version": "4",
                                                            "alerts": [_alert("Silent"), _alert("Prompt")]})
            assert r.status_code == 200
            assert hooks.wait(lambda got: any(p == "/lead" for p, _ in got))  # long before the 1 h
            events = poll(lambda: _history(c, url), timeout=BOUND_S, what="answered and unanswered calls")
            groups = {g["labels"]["alertname"]: g for g in c.get(f"{url}/api/v1/alerts/oncall-groups").json()}
    finally:
        err = _stop(proc)
        fake.stop()
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


def _history(c: httpx.Client, url: str) -> list[dict[str, Any]] | None:
    events: list[dict[str, Any]] = c.get(f"{url}/api/v1/alerts/history").json()["data"]
    return events if {"answered", "unanswered"} <= {e["kind"] for e in events} else None
