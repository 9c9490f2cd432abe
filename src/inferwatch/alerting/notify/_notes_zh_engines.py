"""The engine packs' summaries and descriptions (``rules.packs``) in Chinese, as the evaluator expands them.

Kept beside the default pack's table (``_notes_zh``), which consults these after its own:

>>> from inferwatch.alerting.notify._notes_zh import translate_summary
>>> translate_summary("SGLang target 10.0.0.7:30000 of job sglang is down", "zh-CN")
'任务 sglang 的 SGLang 目标 10.0.0.7:30000 已宕机'
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["ENGINE_DESCRIPTIONS", "ENGINE_SUMMARIES"]

_ENGINES = r"(vLLM|SGLang|TGI|Triton|TensorRT-LLM)"
Replacement = str | Callable[[re.Match[str]], str]

ENGINE_SUMMARIES: tuple[tuple[re.Pattern[str], Replacement], ...] = tuple((re.compile(p), r) for p, r in (
    (_ENGINES + r" target (.+) of job (.+) is down", r"任务 \3 的 \1 目标 \2 已宕机"),
    (r"TensorRT-LLM model (.+) on (.+) holds active requests but runs no iterations",
     r"\2 上的 TensorRT-LLM 模型 \1 持有活动请求，但没有执行任何迭代"),
    (r"TensorRT-LLM model (.+) on (.+) runs its batch full", r"\2 上的 TensorRT-LLM 模型 \1 批次已满"),
    (r"KV cache of TensorRT-LLM model (.+) on (.+) is over 90% full",
     r"\2 上 TensorRT-LLM 模型 \1 的 KV cache 占用超过 90%"),
    (r"TensorRT-LLM model (.+) on (.+) has kept over (\d+) requests waiting for (\d+)m",
     r"\2 上的 TensorRT-LLM 模型 \1 已连续 \4 分钟有超过 \3 个请求在等待"),
    (r"(.+) on (.+) has kept over (\d+) requests (?:waiting|queued) for (\d+)m( \(SGLang\))?$",
     lambda m: f"{m[2]} 上的 {m[1]} 已连续 "
                f"{m[4]} 分钟有超过 {m[3]} 个请求在排队{'（SGLang）' if m[5] else ''}"),
    (r"P99 time to first token of (.+) on (.+) is over (.+)s \(SGLang\)",
     r"\2 上 \1 的 P99 首 token 时间超过 \3 秒（SGLang）"),
    (r"P99 inter-token latency of (.+) on (.+) is over (.+)ms( \(SGLang\))?$",
     lambda m: f"{m[2]} 上 {m[1]} 的 P99 token 间延迟超过 {m[3]} 毫秒{'（SGLang）' if m[4] else ''}"),
    (r"P99 end-to-end request latency of (.+) on (.+) is over (.+)s",
     r"\2 上 \1 的 P99 端到端请求延迟超过 \3 秒"),
    (r"KV cache of (.+) on (.+) is over 90% full( \(SGLang\))?$",
     lambda m: f"{m[2]} 上 {m[1]} 的 KV cache 占用超过 90%{'（SGLang）' if m[3] else ''}"),
    (r"(.+) on (.+) preempts requests \(KV cache exhausted\)", r"\2 上的 \1 正在抢占请求（KV cache 已耗尽）"),
    (r"Over 5% of (.+) requests on (.+) are aborted \(SGLang\)", r"\2 上 \1 超过 5% 的请求被中止（SGLang）"),
    (r"P99 request duration of TGI on (.+) is over (.+)s", r"\1 上 TGI 的 P99 请求耗时超过 \2 秒"),
    (r"P99 time per output token of TGI on (.+) is over (.+)ms",
     r"\1 上 TGI 的 P99 每输出 token 时间超过 \2 毫秒"),
    (r"TGI on (.+) has requests queued but an empty batch for (\d+)m",
     r"\1 上的 TGI 有请求排队但批次为空已持续 \2 分钟"),
    (r"Over 5% of (.+) inference requests fail on (.+)", r"\2 上 \1 超过 5% 的推理请求失败"),
    (r"Average inference compute time of (.+) on (.+) is over (.+)s",
     r"\2 上 \1 的平均推理计算时间超过 \3 秒"),
    (r"Requests for (.+) on (.+) wait over (.+)ms in the queue", r"\2 上 \1 的请求排队等待超过 \3 毫秒"),
    (r"GPU (.+) of Triton on (.+) is over 95% busy", r"\2 上 Triton 的 GPU \1 繁忙度超过 95%"),
))

ENGINE_DESCRIPTIONS: tuple[tuple[re.Pattern[str], Replacement], ...] = tuple((re.compile(p), r) for p, r in (
    (r"The last scrapes of the " + _ENGINES + r" server failed\.", r"最近对 \1 服务器的抓取均失败。"),
    (r"The last scrapes of the Triton metrics endpoint failed\.", "最近对 Triton 指标端点的抓取均失败。"),
    (r"The last scrapes of Triton's metrics endpoint \(TensorRT-LLM backend\) failed\.",
     "最近对 Triton 指标端点（TensorRT-LLM 后端）的抓取均失败。"),
    (r"(\S+) P99 over 5m\.", r"\1 在 5 分钟内的 P99。"),
    (r"(\S+) \(former (\S+)\) P99 over 5m\.", r"\1（旧名 \2）在 5 分钟内的 P99。"),
    (r"(\S+) has not dropped below (.+) in 5m\.", r"\1 在 5 分钟内未低于 \2。"),
    (r"KV cache usage is (.+) \(1 is full\); requests get preempted next\.",
     r"KV cache 占用为 \1（1 为占满）；接下来请求会被抢占。"),
    (r"sglang:token_usage averaged over 5m is (.+); requests get retracted next\.",
     r"sglang:token_usage 在 5 分钟内的均值为 \1；接下来请求会被撤回。"),
    (r"vllm:num_preemptions_total grows by more than 0\.1/s\.",
     "vllm:num_preemptions_total 每秒增长超过 0.1。"),
    (r"sglang:num_aborted_requests_total over all requests in 5m is (.+)\.",
     r"5 分钟内 sglang:num_aborted_requests_total 占全部请求的比例为 \1。"),
    (r"tgi_queue_size stays above 0 while tgi_batch_current_size stays 0\.",
     "tgi_queue_size 持续大于 0，而 tgi_batch_current_size 持续为 0。"),
    (r"nv_inference_request_failure / all requests over 5m\.",
     "5 分钟内 nv_inference_request_failure 占全部请求的比例。"),
    (r"(rate\(\S+\) / rate\(\S+\)) over 5m\.", r"5 分钟内的 \1。"),
    (r"nv_gpu_utilization \(0 to 1\) averaged over 5m\.", "nv_gpu_utilization（0 到 1）在 5 分钟内的均值。"),
    (r"(\S+) has not changed in 5m while requests stay active\.",
     r"请求保持活动期间，\1 在 5 分钟内没有变化。"),
    (r"Used KV-cache blocks over the maximum, averaged over 5m: (.+)\.",
     r"已用 KV cache 块占最大值的比例，5 分钟均值：\1。"),
    (r"Active requests over the maximum stayed above (.+) for 5m: new requests wait\.",
     r"活动请求占最大值的比例在 5 分钟内一直高于 \1：新请求需要等待。"),
))
