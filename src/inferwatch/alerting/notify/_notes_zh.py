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

__all__ = ["translate_note", "translate_summary"]

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
    (r"Escalation (\S+): step (\d+) of (\d+) \((\S+) did not answer (\d+) calls?\)",
     r"升级 \1：第 \2/\3 步（\4 未接听 \5 次呼叫，立即）"),
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


# The default rule pack's summaries (as the evaluator expands them) and their Chinese.
_SUMMARIES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p), r) for p, r in (
    (r"GPU (.+) on (.+) uses over 80% of its memory", r"\2 上的 GPU \1 显存占用超过 80%"),
    (r"CPU of (.+) is over 80% busy", r"\1 的 CPU 使用率超过 80%"),
    (r"P99 latency of (.+) is over (.+)s", r"\1 的 P99 延迟超过 \2 秒"),
    (r"Over 1% of (.+) requests fail", r"\1 超过 1% 的请求失败"),
    (r"(.+) answers HTTP 503 to half of its requests or more", r"\1 对一半及以上的请求返回 HTTP 503"),
    (r"(.+) has received no requests for 5 minutes", r"\1 已 5 分钟没有收到请求"),
    (r"Target (.+) of job (.+) is down", r"任务 \2 的目标 \1 已宕机"),
    (r"P99 time to first token of (.+) on (.+) is over (.+)s",
     r"\2 上 \1 的 P99 首 token 时间超过 \3 秒"),
    (r"P99 time per output token of (.+) on (.+) is over (.+)s",
     r"\2 上 \1 的 P99 每输出 token 时间超过 \3 秒"),
    (r"P99 queue time of (.+) requests on (.+) is over (.+)s", r"\2 上 \1 请求的 P99 排队时间超过 \3 秒"),
    (r"Feature (.+) of (.+) drifts \(PSI > 0\.1\)", r"\2 的特征 \1 发生漂移（PSI > 0.1）"),
    (r"Feature (.+) of (.+) needs review \(PSI > 0\.25\)", r"\2 的特征 \1 需要人工复核（PSI > 0.25）"),
    (r"Feature (.+) of (.+) drifts enough to roll back \(PSI > 0\.5\)",
     r"\2 的特征 \1 漂移严重，建议回滚（PSI > 0.5）"),
    (r"Over 5% of (.+) samples are anomalous", r"\1 超过 5% 的样本异常"),
    (r"A/B test (.+) shows a significant difference", r"A/B 测试 \1 出现显著差异"),
    (r"The store holds over (.+) of server\.limits\.max_series \(ratio (.+)\)",
     r"存储的序列数已超过 server.limits.max_series 的 \1（比例 \2）"),
    (r"Rule evaluation is behind: (.+) rounds skipped in 10 minutes",
     r"规则评估落后：10 分钟内跳过了 \1 轮"),
    (r"The outbox of receiver (.+) grows: (.+) notifications owed",
     r"接收方 \1 的待发队列持续增长：积压 \2 条通知"),
    (r"Every scrape fails: all (.+) targets are down", r"所有抓取均失败：全部 \1 个目标都已宕机"),
    (r"Heartbeats to the dead man's switch fail: (.+) in a row",
     r"发往外部心跳监控（dead man's switch）的心跳失败：已连续 \1 次"),
    (r"No heartbeat from (.+) for over (.+)", r"超过 \2 未收到 \1 的心跳"),
    (r"Every probe of (.+) fails: it is unreachable from outside", r"\1 的所有探测均失败：从外部无法访问"),
    (r"Golden set (.+) of (.+): (.+) of its answers are wrong", r"\2 的黄金集 \1：\3 的回答错误"),
    (r"Probe (.+) of (.+) takes over (.+)s", r"\2 的探测 \1 耗时超过 \3 秒"),
    (r"The TLS certificate of (.+) \(probe (.+)\) expires in under (.+) days",
     r"\1 的 TLS 证书（探测 \2）将在 \3 天内过期"),
    (r"(.+) of (.+) asked for (.+) and runs on the CPU", r"\2 的 \1 请求了 \3，但运行在 CPU 上"),
    (r"Replica (.+) of (.+) is slower than its peers", r"\2 的副本 \1 比同组副本更慢"),
    (r"Replica (.+) of (.+) fails more requests than its peers", r"\2 的副本 \1 失败的请求多于同组副本"),
    (r"Replica (.+) of (.+) is less confident than its peers", r"\2 的副本 \1 的置信度低于同组副本"),
    (r"GPU (.+) on (.+) is busier or idler than the GPUs serving (.+)",
     r"\2 上的 GPU \1 比服务 \3 的其他 GPU 更忙或更闲"),
    (r"GPU (.+) on (.+) holds more memory than the GPUs serving (.+)",
     r"\2 上的 GPU \1 占用的显存多于服务 \3 的其他 GPU"),
    (r"Estimated (.+) of (.+) on (.+) dropped below the reference's band",
     r"\3 上 \2 的估计 \1 已低于参考区间"),
    (r"Realized accuracy of (.+) on (.+) dropped below the reference's band",
     r"\2 上 \1 的实际准确率已低于参考区间"),
    (r"Feature (.+) of (.+): over 5% of rows fail the (.+) check",
     r"\2 的特征 \1：超过 5% 的行未通过 \3 检查"),
    (r"Embedding (.+) of (.+) on (.+) drifted from the reference", r"\3 上 \2 的嵌入 \1 相对参考发生漂移"),
    (r"The server cannot write to its store: samples are not being stored",
     "服务器无法写入存储：样本未被保存"),
    (r"The data directory's filesystem is nearly full \((.+)B free\)",
     r"数据目录所在的文件系统即将写满（剩余 \1B）"),
    (r"An HA replica is missing: (.+) of the pair not seen", r"HA 副本缺失：双副本中有 \1 个未被看到"),
    (r"The HA pair's shared database cannot be reached", "HA 双副本的共享数据库无法连接"),
    (r"(.+) is or was damaged \((.+) series lost samples\): see the server's log",
     r"\1 已损坏或曾损坏（\2 个序列丢失样本）：请查看服务器日志"),
    (r"The store holds over 80% of server\.limits\.max_series \(now (.+)\)",
     r"存储的序列数已超过 server.limits.max_series 的 80%（当前 \1）"),
    (r"Mean (.+) score of (.+) on (.+) dropped against the day before",
     r"\3 上 \2 的平均 \1 评分较前一天下降"),
    (r"Negative feedback on (.+) of (.+) is over (.+) %",
     r"\2 的 \1 负面反馈超过 \3%"),
    (r"Refusals and guardrail hits on (.+) of (.+) spiked",
     r"\2 的 \1 拒答与护栏命中激增"),
    (r"Tenant (.+) of (.+) is on course to overspend its daily budget",
     r"\2 的租户 \1 按当前速度将超出每日预算"),
    (r"Tenant (.+) of (.+) spent over its daily budget",
     r"\2 的租户 \1 已超出每日预算"),
    (r"Edge device (.+) sent no data and no heartbeat for (.+) heartbeats",
     r"边缘设备 \1 已有 \2 个心跳周期没有数据和心跳"),
    (r"Edge device (.+) drops samples from its spool \(full or older than 24 h\)",
     r"边缘设备 \1 正在从本地缓冲中丢弃样本（已满或超过 24 小时）"),
    (r"(.+) edge devices of site (.+) sent no data and no heartbeat for 1\.5 heartbeats",
     r"站点 \2 有 \1 台边缘设备已有 1.5 个心跳周期没有数据和心跳"),
    # a group's summary of several alerts (``_summary``): "3 features: age, income and 2 more"
    (r"(\d+) (\w+?)s?: (.+) and (\d+) more", r"共 \1 个 \2：\3 等（另有 \4 个）"),
    (r"(\d+) (\w+?)s?: (.+)", r"共 \1 个 \2：\3"),
))


def translate_summary(summary: str, language: str) -> str:
    """A default-pack rule's summary in ``language`` (a summary of one's own rule stays as written)."""
    if language != "zh-CN":
        return summary
    for pattern, replacement in _SUMMARIES:
        if pattern.fullmatch(summary):
            return pattern.sub(replacement, summary, count=1)
    return summary
