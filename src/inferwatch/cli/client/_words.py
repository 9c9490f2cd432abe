"""The on-call verbs' fixed words in each language of ``alerting.language`` (history, oncall)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

__all__ = ["HISTORY_KINDS", "SLO_WORDS", "WORDS", "local_time"]

HISTORY_KINDS = {
    "zh-CN": {"firing": "告警", "resolved": "已恢复", "notified": "已通知", "escalated": "已升级",
              "acknowledged": "已确认", "unacknowledged": "取消确认", "silenced": "已静默",
              "inhibited": "已抑制", "action": "动作", "pending": "待触发", "answered": "已接听",
              "unanswered": "未接听"},
}
"""History event kinds as shown (English shows the API's own names)."""

WORDS: dict[str, dict[str, str]] = {
    "en": {"step": " (step {n})", "esc_step": "{policy} step {n}", "by": "by {who}",
           "rounds": "{number} did not answer {n} call(s)", "texted": ", texted",
           "text_failed": ", text failed",
           "stats": f"{'SERVICE':16}  {'TIER':4}  {'ALERTS':6}  {'ACKED':5}  {'MTTA':8}  {'RESOLVED':8}"
                    "  MTTR",
           "shifts": f"{'SCHEDULE/LAYER':24}  {'NOW':18}  {'UNTIL (local)':22}  {'NEXT':12}  CONTACTS",
           "override": " (override)", "no_schedules": "no schedules (alerting.oncall.schedules is empty)"},
    "zh-CN": {"step": "（第 {n} 步）", "esc_step": "{policy} 第 {n} 步", "by": "操作人 {who}",
              "rounds": "{number} 未接听 {n} 次呼叫", "texted": "，已发短信", "text_failed": "，短信发送失败",
              "stats": "服务              级别  告警数  已确认  MTTA      已恢复    MTTR",
              "shifts": "排班/层级                 当前值班            交班时间 (本地)"
                        "         下一位        联系方式",
              "override": "（替班）", "no_schedules": "没有排班 (alerting.oncall.schedules 为空)"},
}

SLO_WORDS: dict[str, dict[str, str]] = {
    "en": {"none": "no SLOs (declare slos: or slo_files: in the config)",
           "head": "{id}: objective {objective}%  SLI {sli}  budget left {budget} of {period}",
           "data": "  data  {seen} observed, {cover} of {period}: the budget is computed over what "
                   "was observed",
           "burn": "  burn  {burn}", "state": "  burning: {burning}; firing: {firing}", "nothing": "none",
           "down": "  bad events: {errors} + downtime from {source}: unreachable {m5} of 5m, {period_down} "
                   "of {period}"},
    "zh-CN": {"none": "没有 SLO (在配置中声明 slos: 或 slo_files:)",
              "head": "{id}: 目标 {objective}%  SLI {sli}  错误预算剩余 {budget} (周期 {period})",
              "data": "  数据  已观测 {seen}, 占周期 {period} 的 {cover}: 错误预算按已观测的数据计算",
              "burn": "  燃烧率  {burn}", "state": "  正在燃烧: {burning}; 告警中: {firing}", "nothing": "无",
              "down": "  坏事件: {errors} + 来自 {source} 的不可用时间: 5m 内不可用 {m5}, 周期 {period} 内 "
                      "{period_down}"},
}
"""``slo status`` lines in each language."""


def local_time(t: float, timezone: str, seconds: bool = True) -> str:
    """``2026-12-04 09:00:00 CST``: a time in ``timezone``, its zone shown."""
    return datetime.fromtimestamp(t, ZoneInfo(timezone)).strftime(
        "%Y-%m-%d %H:%M:%S %Z" if seconds else "%Y-%m-%d %H:%M %Z")
