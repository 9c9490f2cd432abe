"""Actions' notes in Chinese: the outcome lines actions add to a notification, translated by pattern.

Actions write their outcome once, in English (it is also their record in the
API and the history); a Chinese message shows it translated. A line no rule
knows is shown as it is.

>>> translate_note("action degrade (fire): degraded via http://ranker/admin/degrade", "zh-CN")
'动作 degrade（触发）：已降级（http://ranker/admin/degrade）'
>>> translate_note("action degrade (fire): degraded via http://x", "en")
'action degrade (fire): degraded via http://x'
"""

from __future__ import annotations

import re

__all__ = ["translate_note"]

_PHASES = {"fire": "触发", "resolve": "恢复"}
_NOTE = re.compile(r"action (?P<name>\S+) \((?P<phase>fire|resolve)\): (?P<outcome>.*)", re.S)
_OUTCOMES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.S), r) for p, r in (
    (r"failed: (.*)", r"失败：\1"),
    (r"skipped: no admin URL configured \(would degrade (.*)\)", r"已跳过：未配置管理接口（本应降级 \1）"),
    (r"skipped: no admin URL configured \(would restore (.*)\)", r"已跳过：未配置管理接口（本应恢复 \1）"),
    (r"degraded via (.*)", r"已降级（\1）"),
    (r"restored via (.*)", r"已恢复正常模式（\1）"),
    (r"rollback of (.*) to the previous version recommended \(automatic rollback not enabled\)",
     r"建议将 \1 回滚到上一版本（未启用自动回滚）"),
    (r"skipped: no Kubernetes credentials \(would scale deployment (\S+) by (\d+), max (\d+)\)",
     r"已跳过：没有 Kubernetes 凭据（本应将 deployment \1 扩容 \2 个副本，上限 \3）"),
    (r"deployment (\S+) already at (\d+) replicas \(max (\d+)\)", r"deployment \1 已有 \2 个副本（上限 \3）"),
    (r"scaled deployment (\S+) from (\d+) to (\d+) replicas", r"已将 deployment \1 从 \2 个副本扩容到 \3 个"),
    (r"ran (\S+) \(exit 0\)(.*)", r"已执行 \1（退出码 0）\2"),
    (r"deduplicated: already ran for (.*) at (.*) \((.*)\); once per (.*)",
     r"已去重：\1 已于 \2 执行过（\3）；每 \4 一次"),
))


# The on-call lines (acknowledgement link, escalation step, who is on call).
_ONCALL: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.S), r) for p, r in (
    (r"Acknowledge: (\S+)", r"认领：\1"),
    (r"Escalation (\S+): step (\d+) of (\d+) \(at once, not acknowledged\)",
     r"升级 \1：第 \2/\3 步（立即，未认领）"),
    (r"Escalation (\S+): step (\d+) of (\d+) \((.+), not acknowledged\)",
     r"升级 \1：第 \2/\3 步（\4 后，未认领）"),
    (r"On call \((.+?)\): (.+)", r"值班（\1）：\2"),
))


def translate_note(note: str, language: str) -> str:
    """``note`` in ``language`` (zh-CN: action outcomes and on-call lines translated; other text as it is)."""
    if language != "zh-CN":
        return note
    m = _NOTE.fullmatch(note)
    if m is None:
        hit = next((p for p, _ in _ONCALL if p.fullmatch(note)), None)
        return note if hit is None else hit.sub(dict(_ONCALL)[hit], note, count=1)
    outcome = m["outcome"]
    for pattern, replacement in _OUTCOMES:
        if pattern.fullmatch(outcome):
            outcome = pattern.sub(replacement, outcome, count=1)
            break
    return f"动作 {m['name']}（{_PHASES[m['phase']]}）：{outcome}"
