"""How a group reads: a summary that counts and names what it holds, no stale resolved lines."""

from __future__ import annotations

from alerting.conftest import alert
from inferwatch.alerting import AlertGroup, Notification
from inferwatch.alerting.notify._message import render
from inferwatch.alerting.notify._template import group_lines, group_summary
from inferwatch.model import Labels


def _group(*alerts: object, now: float = 100.0) -> AlertGroup:
    return AlertGroup("k", Labels({"alertname": "FeatureDriftReview", "service": "ranker"}),
                      tuple(alerts), now)  # type: ignore[arg-type]


def test_summary_counts_and_names_the_alerts_of_a_group() -> None:
    # rule: several alerts -> "N <label>s: v1, v2, ..." on the label that tells them apart
    g = _group(*(alert("FeatureDriftReview", feature=f, value=0.3) for f in ("age", "income", "clicks")))
    assert group_summary(g) == "3 features: age, income, clicks"
    assert group_lines(g)[0] == "3 features: age, income, clicks"
    storm = _group(*(alert("FeatureDriftReview", instance=f"h{i}") for i in range(500)))
    assert group_summary(storm) == "500 instances: " + ", ".join(f"h{i}" for i in range(10)) + " and 490 more"
    one = _group(alert("FeatureDriftReview", feature="age"))
    assert group_summary(one) == "FeatureDriftReview on ranker"  # one alert: its own summary


def test_a_firing_message_has_no_stale_resolved_lines() -> None:
    # rule: a FIRING group lists only what fires; a RESOLVED one lists what resolved
    g = _group(alert("FeatureDriftReview", feature="age", start=10.0),
               alert("FeatureDriftReview", feature="ctr", start=0.0, end=50.0),
               alert("FeatureDriftReview", feature="clicks", start=10.0))
    lines = group_lines(g)
    assert lines[0] == "2 features: age, clicks"
    assert not any("resolved" in ln or "ctr" in ln for ln in lines), lines
    assert sum(ln.strip().startswith("firing:") for ln in lines) == 2
    done = _group(alert("FeatureDriftReview", feature="ctr", start=0.0, end=50.0))
    assert sum(ln.strip().startswith("Resolved after 50 s") for ln in group_lines(done)) == 1


def test_every_renderer_summarises_and_drops_stale_lines() -> None:
    # rule: the bilingual renderer (WeCom, DingTalk, Feishu, zh-CN text) reads the same
    g = _group(alert("FeatureDriftReview", feature="age", start=10.0),
               alert("FeatureDriftReview", feature="ctr", start=0.0, end=50.0),
               alert("FeatureDriftReview", feature="income", start=10.0))
    for language in ("en", "zh-CN"):
        text = render(Notification("wecom", (g,)), language=language, markdown=True).fit(1 << 20)
        # zh-CN translates the summary (alerting._notes_zh), naming the same alerts
        assert ("2 features: age, income" if language == "en" else "共 2 个 feature：age, income") in text
        assert "ctr" not in text, text
    assert group_summary(_group()) == ""
