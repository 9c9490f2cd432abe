"""`alerting.language: zh-CN`: every built-in template in Chinese, times in the configured time zone."""

from __future__ import annotations

import io
import random

import pytest

from alerting.conftest import alert
from alerting.test_robots_cn import note
from inferwatch.alerting import AlertGroup, HttpClient, Notification, Pipeline, RecordingNotifier
from inferwatch.alerting.notify import build_notifier
from inferwatch.alerting.notify._email import EmailNotifier
from inferwatch.alerting.notify._message import WORDS, localized_title, render
from inferwatch.alerting.notify._notes_zh import translate_note
from inferwatch.alerting.notify._template import notification_text
from inferwatch.config import EmailReceiverSpec, TerminalReceiverSpec, parse_config
from inferwatch.model import Labels, SimulatedClock

T0 = 1_764_813_600.0  # 2025-12-04 02:00:00 UTC = 10:00 in Shanghai


def test_every_word_has_both_languages() -> None:
    en, zh = WORDS["en"], WORDS["zh-CN"]
    assert set(en.fields) == set(zh.fields) and set(en.tiers) == set(zh.tiers) == {"P0", "P1", "P2"}
    assert all("{n}" in w.more for w in (en, zh))


def test_message_names_dimension_tier_service_value_since_and_link() -> None:
    msg = render(note(alert(start=T0, value=0.8123, tier="P0", instance="a")), language="zh-CN",
                 timezone="Asia/Shanghai", external_url="http://dash")
    text = msg.fit(4096)
    assert text.splitlines() == [
        "[告警中:1] [P0 紧急] HighLatency 服务=ranker",
        "维度: 服务 · 级别: P0 紧急 · 服务: ranker",
        "HighLatency on ranker",
        "  告警中: a 当前值=0.8123 (开始于 2025-12-04 10:00:00 CST)",
        "查看面板: http://dash",
    ]


def test_resolved_title_and_end_time() -> None:
    g = AlertGroup("g", Labels({"alertname": "HighLatency"}), (alert(start=T0, end=T0 + 60),), T0 + 120)
    assert localized_title(g, "zh-CN").startswith("[已恢复:1] [P1 严重] HighLatency")
    assert "恢复于 2025-12-04 10:01:00 CST" in render(Notification("x", (g,)), language="zh-CN",
                                                    timezone="Asia/Shanghai").fit(4096)


def test_english_with_a_time_zone_shows_local_times() -> None:
    text = notification_text(note(alert(start=T0)), language="en", timezone="Asia/Shanghai")
    assert "since 2025-12-04 10:00:00 CST" in text and "[FIRING:1] [P1] HighLatency" in text


def test_english_in_utc_is_unchanged() -> None:
    # the default path is the shared template, not the bilingual renderer
    text = notification_text(note(alert(start=T0)))
    assert "since 2025-12-04 02:00:00 UTC" in text and "dimension:" not in text


def test_terminal_and_email_speak_chinese() -> None:
    out = io.StringIO()
    term = build_notifier(TerminalReceiverSpec(name="t"), HttpClient(), "", out, language="zh-CN",
                          timezone="Asia/Shanghai")
    term.notify(note(alert(start=T0)))
    assert "开始于 2025-12-04 10:00:00 CST" in out.getvalue()
    mail = EmailNotifier(EmailReceiverSpec(name="m", smarthost="h:25", to=("a@example.org",)),
                         language="zh-CN", timezone="Asia/Shanghai").message(note(alert(start=T0)))
    assert mail["Subject"].startswith("[告警中:1] [P1 严重] HighLatency") and "当前值=1" in mail.get_content()


def test_a_receiver_overrides_the_language() -> None:
    out = io.StringIO()
    spec = TerminalReceiverSpec(name="t", language="en")
    build_notifier(spec, HttpClient(), "", out, language="zh-CN").notify(note(alert(start=T0)))
    assert "[FIRING:1]" in out.getvalue() and "告警中" not in out.getvalue()


@pytest.mark.parametrize(("note_text", "chinese"), [
    ("action degrade (fire): degraded via http://ranker/admin",
     "动作 degrade（触发）：已降级（http://ranker/admin）"),
    ("action rollback (fire): rollback of ranker-v2 to the previous version recommended "
     "(automatic rollback not enabled)",
     "动作 rollback（触发）：建议将 ranker-v2 回滚到上一版本（未启用自动回滚）"),
    ("action scale_out (fire): scaled deployment default/ranker from 2 to 3 replicas",
     "动作 scale_out（触发）：已将 deployment default/ranker 从 2 个副本扩容到 3 个"),
    ("action degrade (resolve): failed: POST http://x: HTTP 503",
     "动作 degrade（恢复）：失败：POST http://x: HTTP 503"),
    ("Acknowledge: http://dash/ack?group=g&sig=s", "认领：http://dash/ack?group=g&sig=s"),
    ("Escalation p0: step 2 of 3 (5m, not acknowledged)", "升级 p0：第 2/3 步（5m 后，未认领）"),
    ("Escalation p0: step 1 of 3 (at once, not acknowledged)", "升级 p0：第 1/3 步（立即，未认领）"),
    ("On call (ml-oncall/primary): alice, aliphone: 13800000001",
     "值班（ml-oncall/primary）：alice, aliphone: 13800000001"),
    ("something else", "something else"),
])
def test_action_notes_in_chinese(note_text: str, chinese: str) -> None:
    assert translate_note(note_text, "zh-CN") == chinese
    n = note(alert()).with_notes(note_text)
    assert render(n, language="zh-CN").fit(4096).splitlines()[-1] == chinese


def test_p2_digest_in_chinese_at_local_time() -> None:
    cfg = parse_config("alerting: {language: zh-CN, receivers: [{name: digest, type: digest, "
                       "timezone: Asia/Shanghai}]}").alerting
    recs = {r.name: RecordingNotifier(r.name) for r in cfg.effective_receivers()}
    p = Pipeline(cfg, clock=SimulatedClock(0), notifiers=recs, actions=[], rng=random.Random(1))
    p.send([alert("Drift", tier="P2", severity="warning", dimension="quality", value=0.13)], now=0)
    p.tick(3600)  # 09:00 in Shanghai
    (n,) = recs["terminal"].sent
    assert n.notes[0] == "inferwatch 每日汇总 1970-01-01 09:00 Asia/Shanghai：共 1 条告警"
    assert n.notes[1] == "## 模型质量 (1)"
    # not resent since 0 (the evaluator would keep resending a firing one): resolved by 09:00
    assert n.notes[2] == "- Drift service=ranker：首次出现 1970-01-01 08:00，最近值 0.13，已恢复"


def test_a_receiver_template_replaces_the_title_and_alert_line() -> None:
    from inferwatch.settings._message_template import MessageTemplate

    t = MessageTemplate(title="{tier_name} {alertname}（{service}）{count} 条",
                        alert="- {label[instance]}: {value} @ {since} {label[nosuch]}")
    msg = render(note(alert(start=T0, value=0.5, instance="a", tier="P0"),
                      alert(start=T0, value=0.7, instance="b", tier="P0")),
                 language="zh-CN", timezone="Asia/Shanghai", template=t)
    lines = msg.fit(4096).splitlines()
    assert msg.title == lines[0] == "P0 紧急 HighLatency（ranker）2 条"
    assert lines[-2:] == ["- a: 0.5 @ 2025-12-04 10:00:00 CST ", "- b: 0.7 @ 2025-12-04 10:00:00 CST "]


def test_a_template_with_an_unknown_field_is_refused_at_load() -> None:
    from inferwatch._exceptions import ConfigError

    wanted = r"dingtalk\.template\.title: unknown field 'nosuch' \(known: state, "
    with pytest.raises(ConfigError, match=wanted):
        parse_config("alerting: {receivers: [{name: d, type: dingtalk, template: {title: '{nosuch}'}}]}")


def test_voice_phrase_follows_the_receiver_template() -> None:
    from inferwatch.alerting.notify.phone import alert_phrase
    from inferwatch.settings._message_template import MessageTemplate

    template = MessageTemplate(title="{service} 服务 {tier_name}")
    phrase = alert_phrase(note(alert(tier="P0")), "zh-CN", 35, template)
    assert phrase == "ranker 服务 P0 紧急"


def _expanded_pack_summaries() -> list[str]:
    import re as _re

    from inferwatch.rules import default_rule_pack

    values = {"threshold": "1", "gpu": "0", "Hostname": "node-1", "instance": "10.0.0.7:8000",
              "service": "ranker", "job": "ranker", "model": "qwen-7b", "feature": "age",
              "experiment": "new-ranker"}
    out = []
    for rule in default_rule_pack():
        text = getattr(rule, "annotations", {}).get("summary", "")
        text = _re.sub(r"\{\{\s*\$labels\.(\w+)\s*\}\}", lambda m: values.get(m.group(1), "x"), text)
        out.append(_re.sub(r"\{\{\s*\$threshold\s*\}\}", "1", text))
    return [x for x in out if x]


def test_default_pack_summaries_in_chinese() -> None:
    from inferwatch.alerting.notify._notes_zh import translate_summary

    summaries = _expanded_pack_summaries()
    translated = {s: translate_summary(s, "zh-CN") for s in summaries}
    # a summary a later change rewrites falls back to English: at least most stay translated
    assert sum(s != t for s, t in translated.items()) >= 0.8 * len(summaries), translated
    assert translate_summary("P99 latency of ranker is over 1s", "zh-CN") == "ranker 的 P99 延迟超过 1 秒"
    several = translate_summary("3 features: age, income, clicks", "zh-CN")
    assert several == "共 3 个 feature：age, income, clicks"
    assert translate_summary("my own words", "zh-CN") == "my own words"
