// The dashboard's language: English or 简体中文, switched with the header's button and remembered.
//
// The pages write English; in Chinese a watcher translates every text the pages put in the
// document (an exact phrase, or a pattern such as "since 5 min ago"), including what a page redraws
// on its timer. A text nobody translated (a metric name, a label value, a rule's own summary) stays.
// An element marked ``data-raw`` holds data (a server's words, a label name): tests/dashboard/test_phone_axe.py
// reads every other shown text in Chinese and fails on an English word left.

import { place } from "./dom.js";

const KEY = "inferwatch.lang";

const ZH = new Map(Object.entries({
  // header and navigation
  Overview: "总览", Alerts: "告警", Silences: "静默", Explore: "查询", Drift: "漂移", Diagnose: "诊断",
  // the on-call page
  "On call": "值班", "Now and next": "当前与下一班", Acknowledge: "确认", Unacknowledge: "取消确认",
  Timeline: "时间线", "no alert groups": "没有告警组", "no schedules (alerting.oncall.schedules)": "未配置值班表",
  Dark: "深色", Light: "浅色", "Loading…": "加载中…", Menu: "菜单",
  // tiers, states, responses
  "P0 critical": "P0 紧急", "P1 major": "P1 严重", "P2 warning": "P2 警告", "no tier": "无级别",
  firing: "告警中", pending: "待定", inactive: "未触发", resolved: "已恢复", sent: "已发送", failed: "失败",
  "scale-out action + phone escalation": "扩容动作 + 电话升级",
  "degrade action + WeCom group message": "降级动作 + 企业微信群消息",
  "collected into the next-morning digest": "汇入次日早晨的汇总",
  // the alerts page
  "Silence…": "静默…", "next step:": "下一步：", none: "无", "Last 24 hours": "最近 24 小时",
  "Next digest": "下一次汇总", "nothing happened": "无事件", "no digest receiver configured": "未配置汇总接收者",
  time: "时间", tier: "级别", event: "事件", what: "内容", action: "动作", notification: "通知", alert: "告警",
  "inhibited: a higher-tier alert with the same labels fires": "已抑制：相同标签的更高级别告警正在触发",
  "held: this excursion repeats earlier ones (recurrence), it stays pending": "暂缓：此次偏离与此前的重复（周期性），保持待定",
  "silenced by": "静默规则", "example slow traces:": "慢请求示例：",
  // the overview
  service: "服务", range: "时间范围", "refresh off": "不自动刷新", "every 10 s": "每 10 秒", "every 30 s": "每 30 秒",
  "every 1 min": "每 1 分钟", "(none)": "（无）", "A/B tests": "A/B 测试",
  Service: "服务", Infrastructure: "基础设施", "Model quality": "模型质量", Business: "业务",
  "QPS by status code": "按状态码的 QPS", "Latency P50 / P99": "延迟 P50 / P99", "Error and 503 ratios": "错误率与 503 比例",
  "In-flight requests": "处理中的请求", "GPU utilisation": "GPU 利用率", "GPU frame-buffer used": "GPU 显存占用",
  "PCIe throughput": "PCIe 吞吐", "Host CPU": "主机 CPU", "Host memory used": "主机内存占用",
  "Feature drift (PSI)": "特征漂移 (PSI)", "Prediction confidence (P10 / P50 / P90, mean)": "预测置信度 (P10 / P50 / P90, 均值)",
  "Anomalous samples and low confidence": "异常样本与低置信度", "Conversion rate": "转化率",
  "no running A/B tests": "没有进行中的 A/B 测试", "no data in this range": "此时间范围内没有数据",
  "lines:": "阈值线：",
  // the overview's LLM section and edge devices, the cards' delivery status
  "Generative (LLM)": "生成式 (LLM)", "Time to first token P50 / P99": "首 token 时延 P50 / P99",
  "Time per output token P50 / P99": "每个输出 token 时延 P50 / P99", "Output tokens per second": "每秒输出 token 数",
  "Queue time P99": "排队时间 P99", "In flight, running and waiting": "处理中、运行中与等待中",
  "Goodput (within TTFT and TPOT targets)": "有效请求比例（首 token 与每 token 时延均达标）",
  "Finish reasons": "结束原因", "Tokens per request P50 / P99": "每请求 token 数 P50 / P99",
  "KV cache and prefix cache": "KV 缓存与前缀缓存", "Preemptions per second": "每秒抢占次数",
  "Cost per request by tenant": "按租户的每请求成本", "Edge devices": "边缘设备", device: "设备",
  "last seen": "最近联系", samples: "样本数", batches: "批次数", "buffer (backlog)": "缓冲（积压）", dropped: "丢弃",
  heartbeat: "心跳", never: "从未", "printed (no credentials)": "仅打印（无凭据）",
  "no request latency in this range (a generation's is in the Generative (LLM) section)":
    "此时间范围内没有请求延迟（生成请求的延迟见“生成式 (LLM)”部分）",
  // the overview's generation-quality section
  "Generation quality": "生成质量", "Judge scores by model and prompt version (mean)": "按模型与提示词版本的评审评分（均值）",
  "Negative feedback by model and prompt version": "按模型与提示词版本的负面反馈比例",
  "Refusals, guardrail hits and schema failures (share of generations)": "拒答、护栏命中与 JSON 结构校验失败（占生成的比例）",
  "Spend pace by tenant against daily budget (currency per day)": "按租户的花费速度与每日预算（每天的货币金额）",
  "Tenant spend against daily budget": "租户花费与每日预算", "Worst-scored generations": "评分最低的生成",
  tenant: "租户", "spent (last 24 h)": "花费（最近 24 小时）", "daily budget": "每日预算", "share of budget": "占预算比例",
  "last hour × 24": "最近一小时 × 24", "no budget": "无预算", "over budget": "已超预算",
  "on course to overspend": "按当前速度将超预算", "within budget": "预算之内", score: "评分", evaluation: "评估",
  "prompt version": "提示词版本", generation: "生成", trace: "链路",
  "no scores in this range: call `monitor.record_score(\"judge\", value, generation_id=...)` or send `gen_ai.evaluation.result` events over OTLP":
    "此时间范围内没有评分：调用 `monitor.record_score(\"judge\", value, generation_id=...)`，或通过 OTLP 发送 `gen_ai.evaluation.result` 事件",
  "no feedback in this range: call `monitor.record_feedback(positive=False, generation_id=...)`":
    "此时间范围内没有反馈：调用 `monitor.record_feedback(positive=False, generation_id=...)`",
  "no flagged generation in this range: `g.flag(\"refused\")`, `g.flag(\"guardrail\", detail)`, `g.flag(\"schema_invalid\")` or `g.flag(\"truncated\")` in `track_generation`":
    "此时间范围内没有被标记的生成：在 `track_generation` 中调用 `g.flag(\"refused\")`、`g.flag(\"guardrail\", detail)`、`g.flag(\"schema_invalid\")` 或 `g.flag(\"truncated\")`",
  "no spend in this range: call `monitor.set_prices(...)` and pass `tenant=` to `track_generation`":
    "此时间范围内没有花费：调用 `monitor.set_prices(...)`，并在 `track_generation` 中传入 `tenant=`",
  "no spend recorded: call `monitor.set_prices(...)` and pass `tenant=` to `track_generation`; budgets with `monitor.set_tenant_budgets(...)`":
    "没有记录花费：调用 `monitor.set_prices(...)` 并在 `track_generation` 中传入 `tenant=`；预算用 `monitor.set_tenant_budgets(...)` 设置",
  "no scored generations in this range: pass `generation_id=` to `track_generation` and `record_score`, and trace the app (`inferwatch.tracing`) to link each one to its trace":
    "此时间范围内没有已评分的生成：在 `track_generation` 与 `record_score` 中传入 `generation_id=`，并为应用开启链路追踪（`inferwatch.tracing`），以便链接到各自的链路",
  // the overview's engine-pack sections
  "Engine: vLLM": "引擎：vLLM",
  "Engine: SGLang": "引擎：SGLang",
  "Engine: TGI": "引擎：TGI",
  "Engine: Triton": "引擎：Triton",
  "Engine: TensorRT-LLM": "引擎：TensorRT-LLM",
  "vLLM time to first token and inter-token latency P99": "vLLM 首 token 时间与 token 间延迟 P99",
  "vLLM requests running and waiting": "vLLM 运行中与等待中的请求",
  "vLLM KV cache usage": "vLLM KV cache 占用",
  "SGLang time to first token and inter-token latency P99": "SGLang 首 token 时间与 token 间延迟 P99",
  "SGLang requests running and queued": "SGLang 运行中与排队中的请求",
  "SGLang KV cache token usage": "SGLang KV cache token 占用",
  "TGI request duration and time per token P99": "TGI 请求耗时与每 token 时间 P99",
  "TGI queue and batch size": "TGI 队列与批次大小",
  "Triton failed inference ratio": "Triton 推理失败比例",
  "Triton queue and compute time per request (mean)": "Triton 每请求排队与计算时间（均值）",
  "Triton GPU utilisation": "Triton GPU 利用率",
  "TensorRT-LLM requests active, waiting and max": "TensorRT-LLM 活动、等待与最大请求数",
  "TensorRT-LLM KV cache blocks used": "TensorRT-LLM 已用 KV cache 块",
  "TensorRT-LLM iterations per second": "TensorRT-LLM 每秒迭代次数",
  "no vLLM metrics: scrape the vLLM server's /metrics (a job whose name contains vllm)": "没有 vLLM 指标：请抓取 vLLM 服务器的 /metrics（任务名称包含 vllm）",
  "no SGLang metrics: start the server with --enable-metrics and scrape it (a job whose name contains sglang)": "没有 SGLang 指标：用 --enable-metrics 启动服务器并抓取它（任务名称包含 sglang）",
  "no TGI metrics: scrape the TGI server's /metrics (a job whose name contains tgi)": "没有 TGI 指标：请抓取 TGI 服务器的 /metrics（任务名称包含 tgi）",
  "no Triton metrics: scrape Triton's :8002/metrics (a job whose name contains triton)": "没有 Triton 指标：请抓取 Triton 的 :8002/metrics（任务名称包含 triton）",
  "no TensorRT-LLM metrics: scrape Triton's :8002/metrics with the TensorRT-LLM backend loaded": "没有 TensorRT-LLM 指标：请在加载了 TensorRT-LLM 后端时抓取 Triton 的 :8002/metrics",
  // the SLOs page
  SLOs: "SLO", "error budget left": "剩余错误预算", "SLI (5m)": "SLI（5 分钟）",
  "fast page windows burning": "快速燃烧告警窗口超标", "slow page windows burning": "慢速燃烧告警窗口超标",
  "ticket windows burning": "工单窗口超标",
  "no burn rate yet: the SLI's requests are not recorded in this range": "此时间范围内尚无燃烧率：SLI 的请求未被记录",
  "no SLOs: declare slos: or slo_files: in the config (docs/slo.md)": "没有 SLO：在配置中声明 slos: 或 slo_files:（docs/slo.md）",
  // the peers page
  Probes: "拨测", "no probes: declare probes: in the config (docs/probes.md)": "没有拨测：在配置中声明 probes:（docs/probes.md）",
  Peers: "同组对比", outlier: "离群", "no outlier rules (docs/outliers.md)": "没有离群规则（docs/outliers.md）",
  "no members yet": "尚无成员",
  // the fleet page
  Fleet: "设备群", site: "站点", backlog: "积压", version: "版本", config: "配置", "clock offset": "时钟偏差",
  errors: "错误", labels: "标签", "‹ previous": "‹ 上一页", "next ›": "下一页 ›",
  "no device matches the filter": "没有设备符合筛选条件",
  "no edge devices (edge.devices in the config)": "没有边缘设备（配置中的 edge.devices）",
  // the replicas page (an HA pair)
  Replicas: "副本", "no HA pair: add an ha: section to the config (docs/ha.md)": "没有 HA 双副本：在配置中添加 ha: 部分（docs/ha.md）",
  "this replica": "本副本", role: "角色", leader: "主副本（发送）", follower: "从副本", database: "数据库",
  up: "正常", down: "不可用", "journal backlog": "本地日志积压", "lease holder": "租约持有者", "lease age": "租约续期于",
  nobody: "无", replica: "副本", address: "地址", state: "状态", ready: "在线", missing: "缺失",
  "(this one)": "（本副本）",
  "database unreachable: writes wait in the local journal": "数据库不可达：写入暂存于本地日志",
  // silences and the token box
  "New silence": "新建静默", "All silences": "全部静默", "Create silence": "创建静默", "no silences": "没有静默",
  "matchers (one per line: name=\"value\", name=~\"regex\", name!=\"value\")":
    "匹配条件（每行一个：标签=\"值\"、标签=~\"正则\"、标签!=\"值\"）",
  for: "时长", author: "创建人", comment: "备注", matchers: "匹配条件", starts: "开始", ends: "结束", by: "操作人",
  "writes need the server's API token": "写操作需要服务器的 API 令牌", use: "使用", "sign in": "登录",
  "(printed at the server's first start; kept only in this tab) or": "（服务器首次启动时打印；仅保存在此标签页）或",
  "enter the API token or sign in first (above)": "请先在上方输入 API 令牌或登录",
  // explore, diagnose
  Run: "执行", view: "视图", graph: "图表", table: "表格", "Enter runs, Shift+Enter adds a line": "Enter 执行，Shift+Enter 换行",
  "Diagnose: GPU utilisation fell while QPS is unchanged": "诊断：QPS 不变而 GPU 利用率下降",
  "Compares the first and last third of the window: GPU utilisation against QPS, server CPU, PCIe throughput and link, GPU memory and GC, throttle reasons; ranks the causes (what `inferwatch diagnose gpu` does, on this server's store).":
    "比较时间窗口的前三分之一与后三分之一：GPU 利用率对比 QPS、服务器 CPU、PCIe 吞吐与链路、GPU 显存与 GC、降频原因；并对原因排序（即在本服务器的存储上执行 `inferwatch diagnose gpu`）。",
  "Run playbook": "执行诊断手册", window: "时间窗口",
  // drift
  "PSI history": "PSI 历史", Time: "时间", model: "模型", feature: "特征", verdict: "结论",
  "reference vs current": "基线与当前对比", "recommend rollback": "建议回滚", review: "需复核", ok: "正常",
  "reference (grey) vs current (blue) proportion per bin": "各分箱占比：基线（灰）与当前（蓝）",
  experiment: "实验", difference: "差异",
  // overview panels, notes, captions and legends
  "Accuracy: estimated (band) and realized": "准确率：估计值（区间）与实际值", "Data quality per feature": "各特征数据质量",
  "Unreadable observations (type errors)": "无法读取的观测（类型错误）",
  "Queue and compute time per request (mean)": "每请求排队与计算时间（均值）",
  "Estimated: CBPE on each closed window, without labels, with its ±3σ band; it assumes scores calibrated on the reference still hold (no concept drift) and warns when scores leave the reference's range. Realized: the last labelled predictions, once their labels arrive.":
    "估计值：对每个已关闭的窗口做 CBPE（无需标签），带 ±3σ 区间；它假设在基线上校准的分数仍然成立（无概念漂移），分数超出基线范围时会提示。实际值：最近带标签的预测，标签到达后计算。",
  "Only the features and checks with failing rows are drawn: the share of the last closed window's rows failing a check against the reference profile, per feature: missing (no value), out_of_range (outside the reference's minimum and maximum), unseen (a category the reference never had), type_error (a value that is not a number, which drops its whole observation; a share of all the window's rows).":
    "仅绘制有失败行的特征和检查：最近一个已关闭窗口中未通过基线画像检查的行所占比例，按特征：missing（无值）、out_of_range（超出基线的最小值与最大值）、unseen（基线中从未出现的类别）、type_error（不是数字的值，会丢弃整条观测；占窗口全部行的比例）。",
  "Prediction observations the quality monitors could not read and dropped (a value that is not a number, a wrong number of features), per model.":
    "质量监控无法读取而丢弃的预测观测（值不是数字、特征个数不对），按模型。",
  "no GPU metrics: scrape `inferwatch exporter` or dcgm-exporter": "没有 GPU 指标：请采集 `inferwatch exporter` 或 dcgm-exporter",
  "no host metrics: scrape `inferwatch exporter` or node_exporter": "没有主机指标：请采集 `inferwatch exporter` 或 node_exporter",
  "no experiments recorded (inferwatch.business)": "没有记录实验（inferwatch.business）",
  "in flight": "处理中", "whole request": "整个请求", "runtime run (ONNX Runtime, TensorRT)": "运行时执行（ONNX Runtime、TensorRT）",
  // alerts and on call
  "digest message": "汇总消息", Expire: "使其过期", active: "生效中", expired: "已过期",
  "acknowledged by": "确认人", acknowledged: "已确认", silenced: "已静默", inhibited: "已抑制", answered: "已接听",
  unanswered: "未接听", unacknowledged: "已取消确认", notified: "已通知", escalated: "已升级", fire: "触发", resolve: "恢复", alerts: "告警", "members by": "成员按",
  ", groups by": "，分组按", "human review": "需人工复核", "drift (P2)": "漂移（P2）", stable: "稳定",
  "no row failed a data-quality check in this range (or no DataQualityAggregator in the SDK)":
    "此时间范围内没有未通过数据质量检查的行（或 SDK 中没有 DataQualityAggregator）", "wecom message, printed (no credentials)": "企业微信消息，仅打印（无凭据）",
  "scale_out action + phone message": "scale_out 动作 + 电话消息",
}));

const PATTERNS = [
  // the default rule pack's summaries (alerting/notify/_notes_zh.py says the same for messages)
  [/^GPU (.+) on (.+) uses over 80% of its memory$/, "$2 上的 GPU $1 显存占用超过 80%"],
  [/^CPU of (.+) is over 80% busy$/, "$1 的 CPU 使用率超过 80%"],
  [/^P99 latency of (.+) is over (.+)s$/, "$1 的 P99 延迟超过 $2 秒"],
  [/^Over 1% of (.+) requests fail$/, "$1 超过 1% 的请求失败"],
  [/^(.+) answers HTTP 503 to half of its requests or more$/, "$1 对一半及以上的请求返回 HTTP 503"],
  [/^(.+) has received no requests for 5 minutes$/, "$1 已 5 分钟没有收到请求"],
  [/^Target (.+) of job (.+) is down$/, "任务 $2 的目标 $1 已宕机"],
  [/^P99 time to first token of (.+) on (.+) is over (.+)s$/, "$2 上 $1 的 P99 首 token 时间超过 $3 秒"],
  [/^P99 time per output token of (.+) on (.+) is over (.+)s$/, "$2 上 $1 的 P99 每输出 token 时间超过 $3 秒"],
  [/^P99 queue time of (.+) requests on (.+) is over (.+)s$/, "$2 上 $1 请求的 P99 排队时间超过 $3 秒"],
  [/^Feature (.+) of (.+) drifts \(PSI > 0\.1\)$/, "$2 的特征 $1 发生漂移（PSI > 0.1）"],
  [/^Feature (.+) of (.+) needs review \(PSI > 0\.25\)$/, "$2 的特征 $1 需要人工复核（PSI > 0.25）"],
  [/^Feature (.+) of (.+) drifts enough to roll back \(PSI > 0\.5\)$/, "$2 的特征 $1 漂移严重，建议回滚（PSI > 0.5）"],
  [/^Over 5% of (.+) samples are anomalous$/, "$1 超过 5% 的样本异常"],
  [/^A\/B test (.+) shows a significant difference$/, "A/B 测试 $1 出现显著差异"],
  [/^Alerts \((\d+) firing, (\d+) pending\)$/, "告警（$1 个告警中，$2 个待定）"],
  [/^value (.+)$/, "当前值 $1"],
  [/^since (\d+) s ago$/, "开始于 $1 秒前"], [/^since (\d+) min ago$/, "开始于 $1 分钟前"],
  [/^since ([\d.]+) h ago$/, "开始于 $1 小时前"], [/^since ([\d.]+) d ago$/, "开始于 $1 天前"],
  [/^server time (.+)$/, "服务器时间 $1"], [/^server unreachable: (.+)$/, "服务器无法访问：$1"],
  [/^digest (\S+): due (.+), (\d+) alerts$/, "汇总 $1：$2 发送，$3 条告警"],
  [/^and (\d+) earlier \(see the timeline\)$/, "另有 $1 条更早的记录（见时间线）"],
  [/^(\d+) firing$/, "$1 个告警中"],
  [/^objective ([\d.]+) % over (\w+)$/, "目标 $1 %，周期 $2"], [/^firing: (\S+)$/, "告警中：$1"],
  [/^(\S+): burn rate$/, "$1：燃烧率"],
  [/^(\d+) firing of (\d+), to (\S+)$/, "$2 条中 $1 条告警中，发往 $3"],
  [/^Alert groups \((\d+) firing, (\d+) acknowledged\)$/, "告警组（$1 个告警中，$2 个已确认）"],
  [/^(\d+) members: under min_peers, not judged$/, "$1 个成员：少于 min_peers，不作判断"], [/^(\d+) members$/, "$1 个成员"],
  [/^median (\S+) · spread (\S+) ·$/, "中位数 $1 · 离散度 $2 ·"],
  [/^(\d+) of (\d+) devices · page (\d+) of (\d+)$/, "$1 / $2 台设备 · 第 $3 / $4 页"],
  [/^(\S+)\/(\S+): last window (\d+) rows$/, "$1/$2：最近窗口 $3 行"],
  [/^(\S+)\/(\S+): window from (.+), (\d+) rows$/, "$1/$2：窗口始于 $3，$4 行"],
  [/^P2 drift ([\d.]+), review ([\d.]+), rollback ([\d.]+)$/, "P2 漂移 $1，复核 $2，回滚 $3"],
  [/^(.+) (\S+) notification to (\S+):$/, (m, at, type, to) => `${at} ${t(type)}通知发往 ${to}：`],
  [/^(.+ [+-]\d\d:\d\d) action$/, "$1 动作"], [/^\((\w+)\):$/, (m, ph) => `（${t(ph)}）：`],
  [/^\((\w+)\) for (\S+):$/, (m, ph, rule) => `（${t(ph)}），告警 ${rule}：`],
  [/^(\S+) action \+ (\S+) message(, printed \(no credentials\))?$/,
    (m, a, to, printed) => `${a} 动作 + ${to} 消息${printed ? "，仅打印（无凭据）" : ""}`],
  [/^Estimated (\S+) of (\S+) on (\S+) dropped below the reference's band$/, "$3 上 $2 的估计 $1 跌破基线区间"],
  [/^Realized accuracy of (\S+) on (\S+) dropped below the reference's band$/, "$2 上 $1 的实际准确率跌破基线区间"],
  [/^Feature (\S+) of (\S+): over 5% of rows fail the (\S+) check$/, "$2 的特征 $1：超过 5% 的行未通过 $3 检查"],
  [/^Embedding (\S+) of (\S+) on (\S+) drifted from the reference$/, "$3 上 $2 的嵌入 $1 相对基线发生漂移"],
  [/^(\S+) to (\S+) (sent|failed|printed \(no credentials\)) \((.+)\)$/,
    (m, type, to, st, names) => `${t(type)}发往 ${to} ${t(st)}（${names.replace(/^(\d+) lines$/, "$1 行")}）`],
  [/^(\S+): step (\d+)$/, "$1：第 $2 步"],
  [/^time to acknowledge: (.+),$/, "确认用时：$1，"], [/^time to resolve: (.+)$/, "恢复用时：$1"],
  [/^\(step (\d+)\)$/, "（第 $1 步）"], [/^step (\d+) to$/, "第 $1 步，发往"],
  [/^degraded via (\S+)$/, "已通过 $1 降级"],
  [/^scaled deployment (\S+) from (\d+) to (\d+) replicas$/, "已将 deployment $1 从 $2 个副本扩容到 $3 个"],
  [/^(estimated|realized|lower|upper|mean|reference|anomalous|low confidence) (.+)$/,
    (m, w, rest) => `${{ estimated: "估计", realized: "实际", lower: "下界", upper: "上界", mean: "均值", reference: "基线",
      anomalous: "异常", "low confidence": "低置信度" }[w]} ${rest}`],
  [/^(.+)\/d budget$/, "$1/天 预算"],
  [/^(running|waiting|queued|queue|batch|request|per token|compute|active|max) (\S+)$/, (m, w, rest) => `${{ running: "运行中",
    waiting: "等待中", queued: "排队中", queue: "队列", batch: "批次", request: "请求", "per token": "每 token", compute: "计算",
    active: "活动", max: "最大" }[w]} ${rest}`], [/^query failed: (.+)$/, "查询失败：$1"],
  [/^(\d+) s ago$/, "$1 秒前"], [/^(\d+) min ago$/, "$1 分钟前"], [/^([\d.]+) h ago$/, "$1 小时前"],
];

// The header's choice (remembered), else the server's alerting.language, else the browser's language.
export function lang() {
  const chosen = localStorage.getItem(KEY) || place().language || (navigator.language || "").replace(/^zh.*/i, "zh-CN");
  return chosen === "zh-CN" ? "zh-CN" : "en";
}

// ``text`` in the chosen language (surrounding spaces kept).
export function t(text) {
  if (lang() !== "zh-CN") return text;
  const core = text.trim();
  if (!core) return text;
  let out = ZH.get(core);
  if (out === undefined) {
    const hit = PATTERNS.find(([re]) => re.test(core));
    if (!hit) return text;
    out = core.replace(hit[0], hit[1]);
  }
  return text.replace(core, out);
}

function translateTree(root) {
  if (root.nodeType === Node.TEXT_NODE) {
    const next = t(root.nodeValue);
    if (next !== root.nodeValue) root.nodeValue = next;
    return;
  }
  if (root.nodeType !== Node.ELEMENT_NODE || root.closest("script, style, pre, code, textarea, .promql")) return;
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.parentElement.closest("script, style, pre, code, textarea, .promql")) translateTree(n);
  }
}

// The header's button, and (in Chinese) the watcher; called once by app.js.
export function setup() {
  const zh = lang() === "zh-CN";
  document.documentElement.lang = zh ? "zh-CN" : "en";
  const btn = document.getElementById("lang");
  if (btn) {
    btn.textContent = zh ? "English" : "简体中文";
    btn.addEventListener("click", () => {
      localStorage.setItem(KEY, zh ? "en" : "zh-CN");
      location.reload();  // every page redraws in the other language
    });
  }
  if (!zh) return;
  translateTree(document.body);
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "characterData") translateTree(r.target);
      else r.addedNodes.forEach(translateTree);
    }
  }).observe(document.body, { childList: true, characterData: true, subtree: true });
}
