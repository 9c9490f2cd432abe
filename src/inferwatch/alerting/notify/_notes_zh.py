"""Actions' notes in Chinese: the outcome lines actions add to a notification, translated by pattern.

Actions write their outcome once, in English (it is also their record in the
API and the history); a Chinese message shows it translated. A line no rule
knows is shown as it is.

>>> translate_note("action degrade (fire): degraded via http://ranker/admin/degrade", "zh-CN")
'动作 degrade（触发）：已降级（http://ranker/admin/degrade）'
>>> translate_note("action degrade (fire): degraded via http://x", "en")
'action degrade (fire): degraded via http://x'

The default packs' summaries and descriptions are translated the same way (a summary or
description of one's own rule is shown as written):

>>> translate_description("66.7% of requests answer 503.", "zh-CN")
'66.7% 的请求返回 503。'
"""

from __future__ import annotations

import re

from inferwatch.alerting.notify._notes_zh_engines import ENGINE_DESCRIPTIONS, ENGINE_SUMMARIES

__all__ = ["translate_description", "translate_note", "translate_summary"]

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
    (r"Answers on (.+) of (.+) fail their schema more often",
     r"\2 的 \1 回答未通过 schema 校验的比例上升"),
    (r"Prompt length on (.+) of (.+) drifted from the day before",
     r"\2 的 \1 提示长度相对前一天发生漂移"),
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
    # an engine's "is over 200ms" is read before the defaults' "is over (.+)s" can take it
    for pattern, replacement in (*ENGINE_SUMMARIES, *_SUMMARIES):
        if pattern.fullmatch(summary):
            return pattern.sub(replacement, summary, count=1)
    return summary


# The default packs' descriptions, as the evaluator expands them (values filled in).
_DESCRIPTIONS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p), r) for p, r in (
    (r"(.+) of the framebuffer is used\.", r"显存已使用 \1。"),
    (r"CPU utilization is (.+)\.", r"CPU 使用率为 \1。"),
    (r"P99 latency is (.+)\.", r"P99 延迟为 \1。"),
    (r"(.+) of requests answer 5xx\.", r"\1 的请求返回 5xx。"),
    (r"(.+) of requests answer 503\.", r"\1 的请求返回 503。"),
    (r"Request rate is (.+)/s; it had traffic in the last hour\.", r"请求速率为 \1/s；过去一小时内有流量。"),
    (r"The last scrapes failed\.", "最近的抓取均失败。"),
    (r"Scrapes and ingest are refused \(targets show up 0 with the store's error in /api/v1/targets; "
     r"inferwatch_storage_failed_samples_total counts what was lost, by reason\)\.",
     "抓取和写入被拒绝（/api/v1/targets 中目标显示 up 0 及存储的错误；"
     "inferwatch_storage_failed_samples_total 按原因统计丢失的样本）。"),
    (r"The peer has not renewed its row in the shared database for two leases; this replica holds the "
     r"lease and delivers alone\.",
     "对端副本已有两个租约周期未在共享数据库中续期；本副本持有租约并独自发送。"),
    (r"Both replicas deliver on their own \(duplicates possible\); silences and acknowledgements stay on "
     r"the replica that took them until the database returns\.",
     "两个副本各自发送（可能重复）；在数据库恢复之前，静默和确认只保存在接收它们的副本上。"),
    (r"Below 10 % or 1 GiB free; when it is full, nothing is stored \(StorageWriteFailing\)\.",
     "剩余空间低于 10% 或 1 GiB；写满后将不再保存任何数据（StorageWriteFailing）。"),
    (r"Found at start: the damaged file is kept beside it as FILE\.damaged-STAMP and the server runs on "
     r"the rows it could read \(its stderr names the series lost\)\. Found by the daily check while "
     r"running: restart the server to repair it\.",
     "启动时发现：损坏的文件以 FILE.damaged-STAMP 保存在原文件旁，服务器使用能读取的行继续运行"
     "（其 stderr 列出丢失的序列）。运行中由每日检查发现：重启服务器即可修复。"),
    (r"probe_success has been 0 for a minute \(inferwatch probe URL, or the Probes page, shows why\)\.",
     "probe_success 已连续一分钟为 0（inferwatch probe URL 或拨测页面会显示原因）。"),
    (r"Mean probe duration over 5 minutes is (.+)\.", r"5 分钟内的平均探测耗时为 \1。"),
    (r"It expires in (.+) days\.", r"将在 \1 天后过期。"),
    (r"New series are refused once the limit is reached: raise server\.limits\.max_series \(memory "
     r"allowing\) or find the label that explodes \((.+)\)\.",
     r"达到上限后新序列将被拒绝：提高 server.limits.max_series（内存允许时），"
     r"或找出导致序列暴增的标签（\1）。"),
    (r"Rounds take longer than server\.evaluation_interval, so alerts fire late\.",
     "每轮规则评估耗时超过 server.evaluation_interval，告警会延迟触发。"),
    (r"Over 10 minutes for the oldest, and more owed than 15 minutes ago: messages reach people late\.",
     "最早的一条已积压超过 10 分钟，且积压比 15 分钟前更多：消息会延迟送达。"),
    (r"No target has answered a scrape for 5 minutes; the cause is likely on the server's side\.",
     "5 分钟内没有任何目标响应抓取；原因很可能在服务器一侧。"),
    (r"The outside service \((.*)\) hears nothing and pages as if this server were down\.",
     r"外部服务（\1）收不到心跳，会像本服务器宕机一样发出告警。"),
    (r"ONNX Runtime registered (.*) first: inference runs on the CPU \(its log at session creation says "
     r"why the provider was refused\)\.",
     r"ONNX Runtime 首先注册的是 \1：推理运行在 CPU 上（创建会话时的日志说明了该 provider 被拒绝的原因）。"),
    (r"P99 time to first token is (.+)\.", r"P99 首 token 时间为 \1。"),
    (r"P99 time per output token is (.+)\.", r"P99 每输出 token 时间为 \1。"),
    (r"P99 queue time is (.+)\.", r"P99 排队时间为 \1。"),
    (r"The last 30 minutes' mean is (.+) below the previous day's \(at least 30 and 200 scored "
     r"generations\)\.", r"最近 30 分钟的均值比前一天低 \1（分别至少 30 条和 200 条已评分的生成）。"),
    (r"A share of (.+) of the last hour's feedback is negative \(at least 30 feedbacks\)\.",
     r"最近一小时的反馈中负面占比 \1（至少 30 条反馈）。"),
    (r"Their share of generations is (.+) above the day before's \(at least 100 generations in 15 "
     r"minutes\)\.", r"其在生成中的占比比前一天高 \1（15 分钟内至少 100 条生成）。"),
    (r"The last hour's mean prompt length moved by a factor of (.+) against the day before's \(at least 100 "
     r"and 1000 generations\)\.",
     r"最近一小时的平均提示长度相对前一天变化了 \1 倍（分别至少 100 条和 1000 条生成）。"),
    (r"The last hour spent at (.+) times the daily budget's rate, the last 6 hours too\.",
     r"最近一小时的花费速度是每日预算速度的 \1 倍，最近 6 小时也是如此。"),
    (r"The last 24 hours spent (.+) times the daily budget \((.*)\)\.",
     r"最近 24 小时花费了每日预算的 \1 倍（\2）。"),
    (r"PSI (.+) \(warning above (.+)\)\.", r"PSI \1（超过 \2 即告警）。"),
    (r"PSI (.+) \(review above (.+)\)\.", r"PSI \1（超过 \2 需人工复核）。"),
    (r"PSI (.+) \(roll back above (.+)\)\.", r"PSI \1（超过 \2 应回滚）。"),
    (r"(.+) of samples are anomalous \(a page above (.+)\)\.", r"\1 的样本异常（超过 \2 即告警）。"),
    (r"The estimate \(CBPE, no labels yet\) is (.+) below the reference; the whole band is below it, over "
     r"at least 500 predictions\. Assumes no concept drift\.",
     r"估计值（CBPE，尚无标签）比基线低 \1；整个区间都在基线之下，至少 500 条预测。假设没有概念漂移。"),
    (r"Labelled accuracy is (.+) below the reference, beyond 3 sigma of the labelled window \(at least 200 "
     r"labels\)\.", r"带标签的准确率比基线低 \1，超出带标签窗口的 3σ（至少 200 个标签）。"),
    (r"A share of (.+) of the last window's rows \(at least 100\) fails (.*) against the reference "
     r"profile\.", r"最近窗口中占比 \1 的行（至少 100 行）未通过基线画像的 \2 检查。"),
    (r"A classifier tells the last window from the reference at ROC AUC (.+) and MMD² is past its "
     r"permutation critical value \(at least 200 embeddings\)\.",
     r"分类器区分最近窗口与基线的 ROC AUC 为 \1，且 MMD² 超过其置换检验的临界值（至少 200 个嵌入）。"),
    (r"p-value is (.+)\.", r"p 值为 \1。"),
    # the peer-outlier rules (the group's median, spread and the other members filled in); the step
    # rules (``change:``) first: the plain rules' patterns would take their longer texts half-translated
    (r"P99 latency (.+)s over the last minute, a step away from its peers that has lasted (\S+); the "
     r"group's median (.+)s \(spread (.+)s\); others: (.*)",
     r"最近一分钟 P99 延迟 \1s，相对同组副本的跃升已持续 \2；组内中位数 \3s（离散度 \4s）；其他成员：\5"),
    (r"Mean confidence (.+) over the last minute \(at least 50 predictions\), a step away from its peers "
     r"that has lasted (\S+); the group's median (.+) \(spread (.+)\); others: (.*)\. A replica serving a "
     r"different model or a stale feature cache looks like this\.",
     r"最近一分钟平均置信度 \1（至少 50 条预测），相对同组副本的跃变已持续 \2；组内中位数 \3（离散度 \4）；"
     r"其他成员：\5。副本使用了不同的模型或过期的特征缓存时就会这样。"),
    (r"Utilisation (.+)%, a step away from its peers that has lasted (\S+); the group's median (.+)% "
     r"\(spread (.+)\); others: (.*)",
     r"利用率 \1%，相对同组成员的跃变已持续 \2；组内中位数 \3%（离散度 \4）；其他成员：\5"),
    (r"P99 latency (.+)s; the group's median (.+)s \(spread (.+)s\); others: (.*)",
     r"P99 延迟 \1s；组内中位数 \2s（离散度 \3s）；其他成员：\4"),
    (r"5xx ratio (.+); the group's median (.+) \(spread (.+)\); others: (.*)",
     r"5xx 比例 \1；组内中位数 \2（离散度 \3）；其他成员：\4"),
    (r"Mean confidence (.+) over 15 minutes \(at least 200 predictions\); the group's median (.+) "
     r"\(spread (.+)\); others: (.*)\. A replica serving a different model or a stale feature cache looks "
     r"like this\.", r"15 分钟内平均置信度 \1（至少 200 条预测）；组内中位数 \2（离散度 \3）；其他成员：\4。"
     r"副本使用了不同的模型或过期的特征缓存时就会这样。"),
    (r"Utilisation (.+)%; the group's median (.+)% \(spread (.+)\); others: (.*)",
     r"利用率 \1%；组内中位数 \2%（离散度 \3）；其他成员：\4"),
    (r"Framebuffer used ratio (.+); the group's median (.+) \(spread (.+)\); others: (.*)",
     r"显存占用比例 \1；组内中位数 \2（离散度 \3）；其他成员：\4"),
    # the edge pack
    (r"Silent for (.+) heartbeats\.", r"已有 \1 个心跳周期没有消息。"),
    (r"(.+) samples dropped in 30 minutes\.", r"30 分钟内丢弃了 \1 个样本。"),
    (r"Site (.*): (.+) devices silent \(the fleet page lists them: filter site=(.*)\)\.",
     r"站点 \1：\2 台设备无消息（设备群页面列出了它们：筛选 site=\3）。"),
))


def translate_description(text: str, language: str) -> str:
    """A default-pack rule's description in ``language`` (one's own rule's stays as written)."""
    if language != "zh-CN":
        return text
    for pattern, replacement in (*_DESCRIPTIONS, *ENGINE_DESCRIPTIONS):
        if pattern.fullmatch(text):
            return pattern.sub(replacement, text, count=1)
    return text
