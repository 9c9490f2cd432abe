"""The incident page's words in ``alerting.language`` and its times in ``alerting.timezone``.

The page is drawn on the server (no script), so it speaks the configured language itself: its
labels, buttons, what a button did, why a link was refused, durations, and the default pack's
summaries (``translate_summary``, as the Chinese messages show them). Times are in the configured
zone with their offset, and the page says which zone once.

>>> w = PageWords.of("zh-CN", "Asia/Shanghai")
>>> w.time(0.0)
'1970-01-01 08:00 UTC+08:00'
>>> w.duration(750.0)
'12 分钟'
>>> w.refusal("link: its alert episode is over (the group resolved)")
'此链接无效：对应的告警已结束（该告警组已恢复）'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from inferwatch.alerting import translate_summary
from inferwatch.rules import humanize_duration

__all__ = ["LANGUAGES", "PageWords"]

EN = {
    "since": "firing since {t} ({d} ago)", "resolved": "resolved", "acked": "acknowledged by {who}",
    "ack": "Acknowledge", "escalate": "Escalate now", "silence_legend": "Resolve by silence",
    "silence": "Silence {d}", "value": "value", "labels": "labels", "runbook": "runbook:",
    "told_head": "Who was told", "nobody": "nobody yet", "footer": "group {g} · {t} · times in {zone}",
    "escalation": "escalation {policy}: step {step} sent", "told": "{t} {receiver} ({outcome}{step})",
    "told_step": ", step {n}", "graph": "{lo} to {hi} over the last hour", "threshold": ", threshold {v}",
    "no_data": "No data for {q} in the last hour.", "back": "Back to the incident",
    "done_ack": "Acknowledged: escalation stopped.", "done_escalate": "Escalated: step {n} sent.",
    "nothing_to_escalate": "Nothing to escalate: the group is acknowledged, muted or at its last step.",
    "done_silence": "Silenced for {d} (silence {id}): no notification until it ends or is expired.",
    "not_done": "Not done: {why}", "other_site": "Refused: this form was posted from another site.",
    "invalid": "This link is not valid: {why}", "gone": "The group has resolved.",
}
ZH = {
    "since": "告警开始于 {t}（已持续 {d}）", "resolved": "已恢复", "acked": "确认人：{who}",
    "ack": "确认", "escalate": "立即升级", "silence_legend": "静默处理", "silence": "静默 {d}",
    "value": "当前值", "labels": "标签", "runbook": "处理手册：", "told_head": "已通知",
    "nobody": "尚未通知任何人", "footer": "告警组 {g} · {t} · 时间为 {zone}",
    "escalation": "升级策略 {policy}：第 {step} 步已发送", "told": "{t} {receiver}（{outcome}{step}）",
    "told_step": "，第 {n} 步", "graph": "最近一小时 {lo} 至 {hi}", "threshold": "，阈值 {v}",
    "no_data": "最近一小时没有 {q} 的数据。", "back": "返回告警页",
    "done_ack": "已确认：升级已停止。", "done_escalate": "已升级：第 {n} 步已发送。",
    "nothing_to_escalate": "无可升级：该告警组已确认、已静默或已到最后一步。",
    "done_silence": "已静默 {d}（静默 {id}）：在静默结束或被设为过期之前不再通知。",
    "not_done": "未完成：{why}", "other_site": "已拒绝：此表单来自其他站点。",
    "invalid": "此链接无效：{why}", "gone": "该告警组已恢复。",
}
LANGUAGES = {"en": EN, "zh-CN": ZH}
_ZH_OUTCOMES = {"sent": "已发送", "failed": "发送失败", "printed": "仅打印", "answered": "已接听",
                "unanswered": "未接听", "suppressed": "已抑制"}
_ZH_SILENCE = {"1h": "1 小时", "4h": "4 小时", "24h": "24 小时"}
# why a link or an action was refused (alerting.oncall's words), in Chinese
_ZH_WHY: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p), r) for p, r in (
    (r"link: its alert episode is over \(the group resolved\)", "对应的告警已结束（该告警组已恢复）"),
    (r"link: expired", "链接已过期"),
    (r"link: not valid \(bad signature\)", "签名不正确"),
    (r"link: not valid \(incomplete\)", "链接不完整"),
    (r"link: not valid \(no expiry\)", "链接缺少有效期"),
    (r"link: not valid \(links are off\)", "确认链接未启用"),
    (r"link: not valid \(no such action.*\)", "没有这个操作"),
    (r"ack: no (firing )?(.+)", r"没有匹配的告警组（\2）"),
    (r"silence for: one of (.+), got (.+)", r"静默时长须为 \1 之一，收到 \2"),
))


@dataclass(frozen=True)
class PageWords:
    """The page's words in one language, its times in one zone."""

    language: str
    zone: ZoneInfo

    @classmethod
    def of(cls, language: str, timezone: str = "UTC") -> PageWords:
        """``language`` (``en`` or ``zh-CN``; anything else is English) and an IANA ``timezone``."""
        return cls(language if language in LANGUAGES else "en", ZoneInfo(timezone))

    @property
    def zh(self) -> bool:
        """Whether the page speaks Chinese."""
        return self.language == "zh-CN"

    def __call__(self, key: str, **values: object) -> str:
        """The phrase ``key`` with ``values`` filled in."""
        return LANGUAGES[self.language][key].format(**values)

    def time(self, t: float) -> str:
        """``2026-12-07 14:03 UTC+08:00``: minutes in the configured zone, its offset shown."""
        return f"{datetime.fromtimestamp(t, self.zone):%Y-%m-%d %H:%M} {self.offset(t)}"

    def clock(self, t: float) -> str:
        """``14:03``: the time of day in the configured zone (the zone is said once on the page)."""
        return f"{datetime.fromtimestamp(t, self.zone):%H:%M}"

    def offset(self, t: float) -> str:
        """``UTC+08:00`` (``UTC`` at no offset)."""
        z = datetime.fromtimestamp(t, self.zone).strftime("%z")
        return "UTC" if z in ("+0000", "") else f"UTC{z[:3]}:{z[3:]}"

    def zone_name(self, t: float) -> str:
        """``Asia/Shanghai (UTC+08:00)``: which zone the page's times are in."""
        return f"{self.zone.key} ({self.offset(t)})" if self.zone.key != "UTC" else "UTC"

    def duration(self, seconds: float) -> str:
        """How long, as Prometheus's ``humanizeDuration`` writes it, or in Chinese units."""
        if not self.zh:
            return humanize_duration(seconds)
        s = int(max(seconds, 0.0))
        if s < 60:
            return f"{s} 秒"
        if s < 7200:
            return f"{s // 60} 分钟"
        h, m = divmod(s // 60, 60)
        return f"{h} 小时 {m} 分钟" if m else f"{h} 小时"

    def silence(self, length: str) -> str:
        """``1h`` as the button names it."""
        return _ZH_SILENCE.get(length, length) if self.zh else length

    def outcome(self, outcome: str) -> str:
        """A delivery outcome (``sent``, ``failed``) as shown."""
        return _ZH_OUTCOMES.get(outcome, outcome) if self.zh else outcome

    def summary(self, text: str) -> str:
        """An alert's summary: a default-pack summary in the page's language, one's own as written."""
        return translate_summary(text, self.language)

    def refusal(self, why: str) -> str:
        """The sentence for a refused link."""
        return self("invalid", why=self.why(why))

    def why(self, why: str) -> str:
        """Why something was refused (``alerting``'s English), translated where known."""
        if self.zh:
            for pattern, replacement in _ZH_WHY:
                if pattern.fullmatch(why):
                    return pattern.sub(replacement, why, count=1)
        return why
