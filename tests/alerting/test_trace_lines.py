"""Issue 40 #3: a latency alert's example traces and the slowest trace's link in every text channel's message.

The lines come from one place (``_message.trace_lines``), used by the English
templates (``notification_text``, ``group_lines``) and the bilingual renderer the
newer channels use; here each channel's own body is checked, in English and Chinese.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from alerting.conftest import alert
from inferwatch.alerting import AlertGroup, HttpClient, Notification
from inferwatch.alerting.notify._dingtalk import DingTalkNotifier
from inferwatch.alerting.notify._feishu import FeishuNotifier
from inferwatch.alerting.notify._template import notification_text, webhook_payload
from inferwatch.alerting.notify._wecom import WeComNotifier
from inferwatch.alerting.notify._wecom_app import WeComAppNotifier
from inferwatch.config import (
    DingTalkReceiverSpec,
    FeishuReceiverSpec,
    WeComAppReceiverSpec,
    WeComReceiverSpec,
)
from inferwatch.model import Labels, SimulatedClock
from inferwatch.rules import Alert

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
URL = f"http://iw.example:9464/api/v1/traces/{TRACE}"
NOTES = {"example_traces": f"{TRACE} (3.02s), {'a' * 32} (2.9s)", "trace_url": URL}


def traced(a: Alert) -> Alert:
    return replace(a, annotations={**a.annotations, **NOTES})


def note(*alerts: Alert, now: float = 10.0) -> Notification:
    name = "GenerationSlowFirstToken"
    g = AlertGroup(f'{{}}:{{alertname="{name}"}}', Labels({"alertname": name}), tuple(alerts), now)
    return Notification("ops", (g,))


FIRING = note(traced(alert("GenerationSlowFirstToken", value=3.02)))


def bodies(language: str) -> dict[str, str]:
    """Each text channel's body for FIRING, as the text a person reads."""
    clock, http, kw = SimulatedClock(10.0), HttpClient(), {"language": language}
    made = {
        "wecom": WeComNotifier(WeComReceiverSpec(name="ops", key="k"), http, **kw),  # type: ignore[arg-type]
        "dingtalk": DingTalkNotifier(DingTalkReceiverSpec(  # type: ignore[arg-type]
            name="ops", url="https://oapi.dingtalk.com/robot/send?access_token=t"), http, clock=clock, **kw),
        "feishu": FeishuNotifier(FeishuReceiverSpec(  # type: ignore[arg-type]
            name="ops", url="https://open.feishu.cn/open-apis/bot/v2/hook/t"), http, clock=clock, **kw),
        "wecom_app": WeComAppNotifier(WeComAppReceiverSpec(  # type: ignore[arg-type]
            name="ops", corp_id="ww1", agent_id=1, secret="s", to_user=("zhangsan",)),
            http, clock=clock, **kw),
    }
    out = {name: json.dumps(n.body(FIRING), ensure_ascii=False) for name, n in made.items()}
    out["slack, email, terminal"] = notification_text(FIRING, language=language)
    return out


@pytest.mark.parametrize(("language", "examples", "slowest"), [
    ("en", "example traces", "slowest trace"), ("zh-CN", "慢请求示例追踪", "最慢的追踪")])
def test_every_text_channel_names_the_traces_and_links_the_slowest(language: str, examples: str,
                                                                   slowest: str) -> None:
    for name, body in bodies(language).items():
        assert f"{examples}: {TRACE} (3.02s)" in body, (name, body)
        assert URL in body and slowest in body, (name, body)


def test_the_english_templates_and_the_webhook_carry_them_too() -> None:
    text = notification_text(FIRING)
    assert f"    example traces: {TRACE} (3.02s)" in text and f"    slowest trace: {URL}" in text
    assert f"slowest trace: [{URL}]({URL})" in notification_text(FIRING, markdown=True)
    hook = webhook_payload("ops", FIRING.groups[0], "http://iw.example:9464")
    assert hook["alerts"][0]["annotations"]["trace_url"] == URL


def test_resolved_alerts_and_alerts_without_exemplars_have_no_trace_lines() -> None:
    resolved = note(traced(alert("GenerationSlowFirstToken", start=0.0, end=5.0)))
    plain = note(alert("GenerationSlowFirstToken"))
    for n in (resolved, plain):
        assert "trace" not in notification_text(n) and "追踪" not in notification_text(n, language="zh-CN")


SWAP = ("model llama-3-8b → llama-3-8b-q2 at 2026-12-07 14:05 UTC; judge mean 0.85 (n=412) before, "
        "0.61 (n=57) after")


@pytest.mark.parametrize(("language", "word"), [("en", "version change"), ("zh-CN", "版本变更")])
def test_a_score_drop_names_the_version_change_and_the_lowest_scored_generations(language: str,
                                                                               word: str) -> None:
    # issue 54: the GenerationQualityDrop notification shows the swap and the means before and after it
    drop = replace(alert("GenerationQualityDrop", value=0.24), annotations={
        "version_change": SWAP, "example_generations": "c0386e12 (0.55), d35003a1 (0.559)"})
    n = note(drop)
    text = notification_text(n, language=language)
    assert f"    {word}: {SWAP}" in text and "c0386e12 (0.55)" in text, text
    assert SWAP in json.dumps(WeComNotifier(WeComReceiverSpec(name="ops", key="k"),  # type: ignore[arg-type]
                                            HttpClient(), language=language).body(n), ensure_ascii=False)
