"""Issue 53: `history` and `oncall` print in `alerting.language`, times in `alerting.timezone`."""

from __future__ import annotations

from pathlib import Path

import pytest

from alerting.test_oncall import SCHEDULE
from inferwatch.cli import main
from inferwatch.cli.client._history import history_line

T = 1_796_346_000.0  # 2026-12-04 01:00:00 UTC = 09:00 in Shanghai


@pytest.mark.parametrize(("event", "zh", "en"), [
    # rule: kinds, steps and who acted in the team's language; the time in its zone, zone named
    ({"t": T, "kind": "notified", "labels": {"alertname": "Down", "service": "ranker"},
      "detail": {"receiver": "ding", "outcome": "sent", "step": 2}},
     "2026-12-04 09:00:00 CST  已通知", "-> ding sent（第 2 步）"),
    ({"t": T, "kind": "acknowledged", "labels": {"alertname": "Down"}, "detail": {"by": "alice"}},
     "2026-12-04 09:00:00 CST  已确认", "操作人 alice"),
    ({"t": T, "kind": "escalated", "labels": {"alertname": "Down"},
      "detail": {"escalation": "p0", "step": 2, "receivers": ["phone"]}},
     "2026-12-04 09:00:00 CST  已升级", "p0 第 2 步 -> phone"),
    # a voice receiver's sms_fallback texted the number nobody answered at
    ({"t": T, "kind": "unanswered", "labels": {"alertname": "Down"},
      "detail": {"number": "13800000000", "rounds": 2, "record": {"sms": "sent"}}},
     "2026-12-04 09:00:00 CST  未接听", "13800000000 未接听 2 次呼叫，已发短信"),
])
def test_history_lines_in_chinese_and_shanghai_time(event: dict[str, object], zh: str, en: str) -> None:
    line = history_line(event, "zh-CN", "Asia/Shanghai")
    assert line.startswith(zh) and line.endswith(en), line


def test_history_in_english_keeps_the_api_kind_names_and_says_utc() -> None:
    e = {"t": T, "kind": "acknowledged", "labels": {"alertname": "Bravo"}, "detail": {"by": "api-user"}}
    assert history_line(e) == "2026-12-04 01:00:00 UTC  acknowledged    Bravo {} by api-user"


def test_the_oncall_verb_speaks_the_configured_language(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.yml"
    cfg.write_text(SCHEDULE.replace("alerting:\n", "alerting:\n  language: zh-CN\n", 1))
    assert main(["oncall", "--config", str(cfg), "--at", "2026-03-10T17:00:00Z"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("排班/层级") and "carol（替班）" in out and "2026-03-10 18:00 EDT" in out, out
    empty = tmp_path / "e.yml"
    empty.write_text("alerting: {language: zh-CN}\n")
    assert main(["oncall", "--config", str(empty)]) == 0
    assert "没有排班" in capsys.readouterr().out


SLO = {"id": "ranker-availability", "objective": 99.9, "sli": 0.9995, "budget_remaining": 0.5,
       "period": "30d",
       "windows": [{"window": "5m", "burn_rate": 14.4}], "burning": ["page"],
       "alerts": [{"alertname": "SLOBurn", "state": "firing"}], "errors_from": "sdk",
       "downtime": {"source": "up", "unreachable_5m": 0.0, "unreachable_period": 0.001}}


def test_slo_status_in_chinese_and_in_english_unchanged() -> None:
    from inferwatch.cli.client._slo import status_lines

    zh = status_lines([SLO], "zh-CN")
    assert zh[:3] == ["ranker-availability: 目标 99.9%  SLI 99.950%  错误预算剩余 50.000% (周期 30d)",
                      "  燃烧率  5m 14.40x", "  正在燃烧: page; 告警中: SLOBurn"]
    assert zh[3].startswith("  坏事件: sdk + 来自 up 的不可用时间")
    assert status_lines([SLO])[0] == ("ranker-availability: objective 99.9%  SLI 99.950%  "
                                      "budget left 50.000% of 30d")
    assert status_lines([], "zh-CN") == ["没有 SLO (在配置中声明 slos: 或 slo_files:)"]
