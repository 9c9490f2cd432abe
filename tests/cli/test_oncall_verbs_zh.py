"""Issue 53: `history` and `oncall` print in `alerting.language`, times in `alerting.timezone`."""

from __future__ import annotations

from pathlib import Path

import pytest

from alerting.test_oncall import SCHEDULE
from inferwatch.cli import main
from inferwatch.cli._history import history_line

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
