"""The incident page's parts without a server: purpose-bound claims and the HTML (fast).

The end-to-end story (a P0 page's link, a tap in Chromium, the escalation stopped) is
test_incident_link.py.
"""

from __future__ import annotations

import re

import pytest

from inferwatch.alerting import LINK_ACTIONS, LinkRefused, StateDB, group_id
from inferwatch.alerting.oncall import AckLinks, EpisodeIds
from inferwatch.server.web._incident_page import Incident, Plot, Told, incident_html, message_html
from inferwatch.server.web._incident_words import PageWords


@pytest.fixture
def links() -> AckLinks:
    return AckLinks("https://iw.example.com", b"k" * 32, EpisodeIds(StateDB(":memory:")))


def _params(links: AckLinks, key: str, now: float) -> dict[str, str]:
    return dict(p.split("=", 1) for p in links.url(key, now).split("?", 1)[1].split("&"))


def test_each_button_gets_claims_for_its_own_purpose_only(links: AckLinks) -> None:
    # rule: the page's buttons post the link's claims signed again per purpose: an escalate
    # claim does not acknowledge, and an unknown purpose is refused
    key = '{}:{alertname="Down"}'
    ack = _params(links, key, 100.0)
    live = {group_id(key): key}
    assert links.verify(ack, live, 200.0) == key
    escalate = links.for_purpose(ack, "escalate", 200.0)
    assert links.verify(escalate, live, 200.0, "escalate") == key
    with pytest.raises(LinkRefused, match="bad signature"):
        links.verify(escalate, live, 200.0)  # not an acknowledgement
    with pytest.raises(LinkRefused, match="no such action"):
        links.verify(ack, live, 200.0, "delete")
    with pytest.raises(LinkRefused):
        links.for_purpose(ack, "admin", 200.0)
    assert set(LINK_ACTIONS) == {"ack", "escalate", "silence"}
    with pytest.raises(LinkRefused, match="expired"):
        links.for_purpose(ack, "silence", 1e12)


def _incident(**kw: object) -> Incident:
    base: dict[str, object] = dict(
        group="g1", title="ServiceUnavailable", tier="P0", firing_since=1000.0, now=1600.0,
        alerts=[{"labels": {"alertname": "ServiceUnavailable", "service": "<ranker>"},
                 "summary": "ranker answers 503", "value": 0.7513789632390443, "runbook": "restart it"}],
        told=[Told(15120.0, "phone", "sent", 1)], escalation=("p0", 1),
        plot=Plot("rate(x[1m])", [[(400.0, 0.1), (1000.0, 0.9), (1600.0, 0.8)]], 0.5),
        forms={"ack": {"sig": "a"}, "escalate": {"sig": "e"}, "silence": {"sig": "s"}})
    return Incident(**{**base, **kw})  # type: ignore[arg-type]


def test_the_page_says_what_fires_since_when_and_offers_the_three_actions() -> None:
    page = incident_html(_incident())
    assert "firing since 1970-01-01 00:16 UTC (10m 0s ago)" in page
    assert "value <b class='value'>751.4m</b>" in page  # humanize: 4 significant digits
    assert "&lt;ranker&gt;" in page and "<ranker>" not in page  # labels escaped, folded in <details>
    assert page.count("<form method='post'") == 3 and 'id="ack"' in page and 'id="escalate"' in page
    assert "name='for' value='4h'" in page and "do=silence" in page
    assert "<polyline points='" in page and "class='limit'" in page  # the last hour and the threshold
    assert "aria-label='100m to 900m over the last hour, threshold 500m'" in page
    assert "<b>runbook:</b> <span data-raw>restart it</span>" in page
    assert "04:12 <span data-raw>phone</span> (sent, step 1)" in page
    assert "times in <span data-raw>UTC</span>" in page
    assert "<script" not in page


def test_once_acknowledged_the_page_says_by_whom_instead_of_the_button() -> None:
    page = incident_html(_incident(acked_by="link"), "Acknowledged: escalation stopped.")
    assert "acknowledged by <span data-raw>link</span>" in page
    assert 'id="ack"' not in page and 'id="escalate"' in page
    assert "<p id='msg' role='status'>Acknowledged: escalation stopped.</p>" in page


def test_no_data_and_refusals_read_as_sentences() -> None:
    assert "No data for <code>up</code> in the last hour." in incident_html(_incident(plot=Plot("up")))
    refused = message_html("This link is not valid: link: expired")
    assert "link: expired" in refused and "Back to" not in refused


def test_in_chinese_the_page_speaks_chinese_and_shows_times_in_the_configured_zone() -> None:
    # rule: alerting.language zh-CN and alerting.timezone Asia/Shanghai: every word of the page in
    # Chinese (the default pack's summary too), times at +08:00 with the zone named, durations in 分钟
    w = PageWords.of("zh-CN", "Asia/Shanghai")
    page = incident_html(_incident(alerts=[{
        "labels": {"alertname": "ServiceUnavailable", "service": "ranker"}, "value": 0.75,
        "summary": "ranker answers HTTP 503 to half of its requests or more", "runbook": ""}], words=w),
        w("done_ack"))
    assert "<html lang='zh-CN'>" in page
    assert "告警开始于 1970-01-01 08:16 UTC+08:00（已持续 10 分钟）" in page
    assert "ranker 对一半及以上的请求返回 HTTP 503" in page and "当前值 <b class='value'>750m</b>" in page
    assert ">确认</button>" in page and ">立即升级</button>" in page and ">静默 4 小时</button>" in page
    assert "<legend>静默处理</legend>" in page and "<summary>标签</summary>" in page
    assert "<h2>已通知</h2>" in page and "12:12 <span data-raw>phone</span>（已发送，第 1 步）" in page
    assert "升级策略 <span data-raw>p0</span>：第 1 步已发送" in page
    assert "最近一小时 100m 至 900m，阈值 500m" in page
    assert "时间为 <span data-raw>Asia/Shanghai (UTC+08:00)</span>" in page
    assert "已确认：升级已停止。" in page
    shown = re.sub(r"<style>.*</style>|<[^>]+>", " ", page)  # the text a reader sees
    for english in ("firing", "since", "Acknowledge", "Escalate", "Silence", "value", "Who", "runbook",
                    "times"):
        assert english not in shown, english


def test_refusals_and_results_in_chinese() -> None:
    w = PageWords.of("zh-CN", "Asia/Shanghai")
    assert w.refusal("link: expired") == "此链接无效：链接已过期"
    assert w.refusal("link: not valid (bad signature)") == "此链接无效：签名不正确"
    assert w.why("something new") == "something new"  # unknown: shown as it is
    assert "此链接无效" in message_html(w.refusal("link: expired"), words=w)
    assert w.duration(3 * 3600 + 5 * 60) == "3 小时 5 分钟" and w.duration(42) == "42 秒"
    assert PageWords.of("en").time(0.0) == "1970-01-01 00:00 UTC"
