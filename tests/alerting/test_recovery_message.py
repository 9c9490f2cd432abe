"""Issue 53: a recovery says what recovered, how long it lasted and its peak, in the receiver's language."""

from __future__ import annotations

from pathlib import Path

import pytest

from alerting.conftest import alert
from alerting.test_pipeline import make
from inferwatch.alerting import AlertGroup, Notification, StateDB
from inferwatch.alerting.notify._message import render
from inferwatch.alerting.notify._template import notification_text
from inferwatch.model import Labels

T0 = 1_764_813_600.0  # 2025-12-04 02:00:00 UTC = 10:00 in Shanghai
CFG = ("alerting: {language: zh-CN, timezone: Asia/Shanghai,"
       " route: {receiver: terminal, group_wait: 0s, group_interval: 1m}}")


def _resolved(seconds: float, *, value: float = 0.2, peak: float = float("nan")) -> Notification:
    a = alert(start=T0, end=T0 + seconds, value=value, instance="10.0.0.1")
    a = type(a)(a.labels, a.annotations, a.starts_at, a.ends_at, a.value, a.generator_url, peak)
    return Notification("x", (AlertGroup("g", Labels({"alertname": "HighLatency"}), (a,), T0 + seconds + 1),))


def test_the_peak_seen_while_firing_survives_a_restart_and_reaches_the_recovery(tmp_path: Path) -> None:
    # rule: the peak is the highest value while the alert fired in this episode, kept in SQLite
    path = str(tmp_path / "alerting.db")
    p, _ = make(CFG, StateDB(path))
    for t, v in ((0, 0.5), (60, 0.93), (120, 0.7)):
        p.send([alert(start=T0, value=v, instance="10.0.0.1")], now=T0 + t)
        p.tick(T0 + t)
    p.db.close()
    p2, recs = make(CFG, StateDB(path))  # restarted: the alert comes back from the store with its peak
    p2.send([alert(start=T0, value=0.6, instance="10.0.0.1")], now=T0 + 360)
    p2.send([alert(start=T0, end=T0 + 720, value=0.2, instance="10.0.0.1")], now=T0 + 720)
    for t in range(720, 1200, 30):
        p2.tick(T0 + t)
    (done,) = [n for n in recs["terminal"].sent if n.groups[0].status == "resolved"]
    text = render(done, language="zh-CN", timezone="Asia/Shanghai").fit(4096)
    assert "【已恢复】" in text, text
    assert "，持续 12 分钟，峰值 0.93（恢复于 2025-12-04 10:12:00 CST）" in text, text
    assert "当前值" not in text  # the firing text is not repeated
    # a new episode (a new start) begins its own peak
    p2.send([alert(start=T0 + 2000, value=0.4, instance="10.0.0.1")], now=T0 + 2000)
    assert [a.peak for a in p2.alerts.values()] == [0.4]


@pytest.mark.parametrize(("seconds", "zh", "en"), [
    (45, "持续 45 秒", "Resolved after 45 s"),
    (720, "持续 12 分钟", "Resolved after 12 min"),
    (7200 + 5 * 60, "持续 2 小时 5 分钟", "Resolved after 2 h 5 min"),  # hours past two hours
])
def test_the_duration_reads_naturally_in_both_languages(seconds: float, zh: str, en: str) -> None:
    n = _resolved(seconds, peak=0.93)
    assert zh in render(n, language="zh-CN", timezone="Asia/Shanghai").fit(4096)
    assert f"{en}, peak 0.93: 10.0.0.1 (ended" in notification_text(n)


def test_without_a_known_peak_the_last_value_stands_in_and_nan_is_left_out() -> None:
    assert "峰值 0.2（" in render(_resolved(720), language="zh-CN").fit(4096)
    assert "峰值" not in render(_resolved(720, value=float("nan")), language="zh-CN").fit(4096)
    assert "Resolved after 12 min: 10.0.0.1 (ended 2025-12-04 02:12:00 UTC)" in notification_text(
        _resolved(720, value=float("nan")))
