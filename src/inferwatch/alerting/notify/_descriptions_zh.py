"""The default packs' descriptions in Chinese, as the evaluator expands them (values already filled in).

A description of one's own rule is shown as written. The summaries are ``_notes_zh``'s.

>>> translate_description("66.7% of requests answer 503.", "zh-CN")
'66.7% 的请求返回 503。'
>>> translate_description("66.7% of requests answer 503.", "en")
'66.7% of requests answer 503.'
"""

from __future__ import annotations

import re

__all__ = ["translate_description"]

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
    # the peer-outlier rules (the group's median, spread and the other members filled in)
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
    for pattern, replacement in _DESCRIPTIONS:
        if pattern.fullmatch(text):
            return pattern.sub(replacement, text, count=1)
    return text
