"""Every metric inferwatch emits, written down once, with its kind, labels and help.

Exposition, rules, exporters and dashboards refer to these specs, never to
string literals of their own. Names follow Prometheus conventions (base units,
``_total`` for counters, ``_seconds``, ``_ratio``, ``_bytes``); GPU metrics use
the DCGM exporter's names and host CPU uses node_exporter's, so existing
dashboards and rules work unchanged.

Sections are owned by the package that emits them; add a metric to its section
and to ``CATALOG`` at the bottom.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from inferwatch.model._samples import MetricKind

__all__ = ["CATALOG", "MetricSpec"]


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A metric's name (as exposed), kind, label names and help text."""

    name: str
    kind: MetricKind
    help: str
    labels: tuple[str, ...] = ()
    unit: str = ""

    @property
    def family(self) -> str:
        """The family name as prometheus-client wants it (counters lose ``_total``)."""
        if self.kind is MetricKind.COUNTER and self.name.endswith("_total"):
            return self.name[: -len("_total")]
        return self.name


_C, _G, _H = MetricKind.COUNTER, MetricKind.GAUGE, MetricKind.HISTOGRAM
_SVC = ("service", "model", "version")

# --- sdk: service performance ------------------------------------------------
REQUESTS_TOTAL = MetricSpec(
    "inferwatch_requests_total", _C, "Inference requests handled, by route and HTTP status code.",
    (*_SVC, "route", "code"),
)
REQUEST_DURATION = MetricSpec(
    "inferwatch_request_duration_seconds", _H, "Inference request latency in seconds.",
    (*_SVC, "route"), "seconds",
)
INFLIGHT_REQUESTS = MetricSpec(
    "inferwatch_inflight_requests", _G, "Inference requests currently being handled.", _SVC,
)
SDK_DROPPED_TOTAL = MetricSpec(
    "inferwatch_sdk_dropped_total", _C,
    "Observations dropped because the recorder queue was full (never blocks the request).",
    ("service", "kind"),
)
SDK_QUEUE_CAPACITY = MetricSpec(
    "inferwatch_sdk_queue_capacity", _G, "Capacity of the SDK recorder queue.", ("service",),
)
SDK_INVALID_TOTAL = MetricSpec(
    "inferwatch_sdk_invalid_total", _C,
    "Observations rejected as invalid (non-numeric, negative or NaN duration, bad status code).",
    ("service", "kind"),
)
SDK_ERRORS_TOTAL = MetricSpec(
    "inferwatch_sdk_errors_total", _C,
    "Failures inside the SDK that it survived (kind=multiprocess: the shared directory's file); "
    "the app kept serving.",
    ("service", "kind"),
)

# --- sdk: generative serving (OpenTelemetry GenAI names in sdk/_generation.py) ---
_GEN = (*_SVC, "route")
GENERATION_REQUESTS_TOTAL = MetricSpec(
    "inferwatch_generation_requests_total", _C,
    "Generation (LLM) requests handled, by route and status code.", (*_GEN, "code"),
)
GENERATION_TTFT = MetricSpec(
    "inferwatch_generation_time_to_first_token_seconds", _H,
    "Time from the request's arrival to its first output token, successful responses "
    "(gen_ai.server.time_to_first_token).", _GEN, "seconds",
)
GENERATION_TPOT = MetricSpec(
    "inferwatch_generation_time_per_output_token_seconds", _H,
    "Time per output token after the first, per successful response: (duration - ttft) / (tokens - 1) "
    "(gen_ai.server.time_per_output_token).", _GEN, "seconds",
)
GENERATION_DURATION = MetricSpec(
    "inferwatch_generation_duration_seconds", _H,
    "End-to-end generation latency, arrival to last output token (gen_ai.server.request.duration).",
    _GEN, "seconds",
)
GENERATION_QUEUE = MetricSpec(
    "inferwatch_generation_queue_duration_seconds", _H,
    "Time a generation request waited before processing began (when the application reports it).",
    _GEN, "seconds",
)
GENERATION_INPUT_TOKENS_TOTAL = MetricSpec(
    "inferwatch_generation_input_tokens_total", _C, "Input (prompt) tokens of generation requests.", _GEN,
)
GENERATION_OUTPUT_TOKENS_TOTAL = MetricSpec(
    "inferwatch_generation_output_tokens_total", _C, "Output (generated) tokens of generation requests.",
    _GEN,
)
GENERATION_TOKENS_PER_SECOND = MetricSpec(
    "inferwatch_generation_output_tokens_per_second", _H,
    "Output tokens per second of end-to-end latency, per response with at least one output token.", _GEN,
)
GENERATION_REQUEST_INPUT_TOKENS = MetricSpec(
    "inferwatch_generation_request_input_tokens", _H,
    "Input (prompt) tokens per generation request (gen_ai.client.token.usage's buckets).", _GEN,
)
GENERATION_REQUEST_OUTPUT_TOKENS = MetricSpec(
    "inferwatch_generation_request_output_tokens", _H,
    "Output (generated) tokens per generation request (gen_ai.client.token.usage's buckets).", _GEN,
)
GENERATION_FINISH_REASONS_TOTAL = MetricSpec(
    "inferwatch_generation_finish_reasons_total", _C,
    "Generations by why they ended (stop, length, abort, error...; unknown when not given).",
    (*_GEN, "finish_reason"),
)
GENERATION_GOOD_REQUESTS_TOTAL = MetricSpec(
    "inferwatch_generation_good_requests_total", _C,
    "Successful generations within both targets: time to first token and time per output token "
    "(goodput: divide by inferwatch_generation_requests_total; an SLO's good events).", _GEN,
)
GENERATION_TARGET_SECONDS = MetricSpec(
    "inferwatch_generation_target_seconds", _G,
    "The targets a good generation meets (target=time_to_first_token|time_per_output_token).",
    (*_SVC, "target"), "seconds",
)
GENERATION_TENANT_REQUESTS_TOTAL = MetricSpec(
    "inferwatch_generation_tenant_requests_total", _C, "Generation requests by tenant.",
    (*_SVC, "tenant"),
)
GENERATION_COST_TOTAL = MetricSpec(
    "inferwatch_generation_cost_total", _C,
    "Cost of generations from the model's price table (input and output tokens), by tenant and currency.",
    (*_SVC, "tenant", "currency"),
)
ENGINE_REQUESTS_RUNNING = MetricSpec(
    "inferwatch_engine_requests_running", _G, "Requests the inference engine is running (in a batch).", _SVC,
)
ENGINE_REQUESTS_WAITING = MetricSpec(
    "inferwatch_engine_requests_waiting", _G, "Requests waiting in the inference engine's queue.", _SVC,
)
ENGINE_KV_CACHE_USAGE = MetricSpec(
    "inferwatch_engine_kv_cache_usage_ratio", _G, "Share of the engine's KV-cache blocks in use (0-1).", _SVC,
)
ENGINE_PREEMPTIONS_TOTAL = MetricSpec(
    "inferwatch_engine_preemptions_total", _C, "Requests the engine preempted (KV cache full).", _SVC,
)
ENGINE_PREFIX_CACHE_QUERIES_TOTAL = MetricSpec(
    "inferwatch_engine_prefix_cache_queries_total", _C,
    "Prompt tokens looked up in the engine's prefix cache.", _SVC,
)
ENGINE_PREFIX_CACHE_HITS_TOTAL = MetricSpec(
    "inferwatch_engine_prefix_cache_hits_total", _C,
    "Prompt tokens found in the engine's prefix cache.", _SVC,
)

# --- tracing: pipeline stages -----------------------------------------------
STAGE_DURATION = MetricSpec(
    "inferwatch_stage_duration_seconds", _H,
    "Duration of one pipeline stage of a request (preprocess, feature_store, model, ...), in seconds.",
    (*_SVC, "stage"), "seconds",
)
STAGE_ERRORS_TOTAL = MetricSpec(
    "inferwatch_stage_errors_total", _C, "Pipeline stages that ended with an exception, by stage.",
    (*_SVC, "stage"),
)
TRACE_SPANS_TOTAL = MetricSpec(
    "inferwatch_trace_spans_total", _C,
    "Spans by tracing outcome: kept by the tail sampler, sampled_out, dropped (buffer full), "
    "or export_failed (collector unreachable; dropped, never raised).",
    ("service", "outcome"),
)

# --- quality: model quality --------------------------------------------------
FEATURE_PSI = MetricSpec(
    "inferwatch_feature_psi", _G,
    "Population stability index of a feature, current window against the reference profile.",
    ("service", "model", "feature"),
)
ANOMALOUS_SAMPLES_RATIO = MetricSpec(
    "inferwatch_anomalous_samples_ratio", _G,
    "Fraction of samples in the current window flagged anomalous against the reference.",
    ("service", "model"),
)
PREDICTION_CONFIDENCE = MetricSpec(
    "inferwatch_prediction_confidence", _H, "Distribution of the model's prediction confidence.",
    ("service", "model"),
)
FEATURE_PSI_CRITICAL = MetricSpec(
    "inferwatch_feature_psi_critical", _G,
    "PSI a window reaches by chance under no drift (alpha 0.05): chi2.ppf(0.95, bins-1)*(1/N+1/M).",
    ("service", "model", "feature"),
)
DRIFT_WINDOW_SAMPLES = MetricSpec(
    "inferwatch_drift_window_samples", _G, "Samples (rows) in the last closed drift window.",
    ("service", "model"),
)
EMBEDDING_DRIFT_MMD = MetricSpec(
    "inferwatch_embedding_drift_mmd", _G,
    "MMD² (RBF kernel, median heuristic) of an embedding's last window against the reference sample.",
    ("service", "model", "embedding"),
)
EMBEDDING_DRIFT_MMD_CRITICAL = MetricSpec(
    "inferwatch_embedding_drift_mmd_critical", _G,
    "MMD² a window reaches by chance under no drift (permutation test, alpha 0.05).",
    ("service", "model", "embedding"),
)
EMBEDDING_DRIFT_AUC = MetricSpec(
    "inferwatch_embedding_drift_auc", _G,
    "Cross-validated ROC AUC of a classifier telling the last window from the reference (0.5: alike).",
    ("service", "model", "embedding"),
)
EMBEDDING_DRIFT_AUC_CRITICAL = MetricSpec(
    "inferwatch_embedding_drift_auc_critical", _G,
    "AUC above which the classifier means drift: max(0.55, what noise reaches at alpha 0.05).",
    ("service", "model", "embedding"),
)
EMBEDDING_WINDOW_SAMPLES = MetricSpec(
    "inferwatch_embedding_window_samples", _G, "Embeddings observed in the last closed window.",
    ("service", "model", "embedding"),
)
EMBEDDING_INVALID_TOTAL = MetricSpec(
    "inferwatch_embedding_invalid_total", _C,
    "Embeddings rejected (unknown name, wrong dimension, NaN or not numeric).",
    ("service", "model"),
)
FEATURE_DATA_QUALITY = MetricSpec(
    "inferwatch_feature_data_quality_ratio", _G,
    "Share of the last closed window's rows failing a data-quality check per feature against the "
    "reference profile (check: missing, out_of_range, unseen).",
    ("service", "model", "feature", "check"),
)
DATA_QUALITY_WINDOW = MetricSpec(
    "inferwatch_data_quality_window_samples", _G, "Rows in the last closed data-quality window.",
    ("service", "model"),
)
SKETCH_PREFIX = "inferwatch_sketch_"
"""Families under this prefix are window sketches that worker processes add up; never exposed."""
DRIFT_SKETCH = MetricSpec(  # internal: not in CATALOG
    SKETCH_PREFIX + "drift", _G, "Bin counts of one drift window (summed over workers, then scored).",
    ("service", "model", "window", "feature", "bin"),
)
CONFIDENCE_SKETCH = MetricSpec(  # internal: not in CATALOG
    SKETCH_PREFIX + "confidence", _G, "Sums of one confidence window (summed over workers).",
    ("service", "model", "window", "field"),
)
QUALITY_INVALID_TOTAL = MetricSpec(
    "inferwatch_quality_invalid_observations_total", _C,
    "Prediction observations whose features or confidence could not be read (dropped, never raised).",
    ("service", "model"),
)
PREDICTION_CONFIDENCE_MEAN = MetricSpec(
    "inferwatch_prediction_confidence_mean", _G, "Mean prediction confidence in the last closed window.",
    ("service", "model"),
)
LOW_CONFIDENCE_RATIO = MetricSpec(
    "inferwatch_low_confidence_ratio", _G,
    "Fraction of predictions in the last closed window with confidence below the low-confidence threshold.",
    ("service", "model"),
)
PREDICTION_ENTROPY = MetricSpec(
    "inferwatch_prediction_entropy", _G,
    "Mean entropy (nats) of the predicted class probabilities in the last closed window.",
    ("service", "model"),
)
CONFIDENCE_PSI = MetricSpec(
    "inferwatch_confidence_psi", _G,
    "PSI of the prediction confidence, last closed window against the reference profile.",
    ("service", "model"),
)
MODEL_REALIZED = MetricSpec(
    "inferwatch_model_realized", _G,
    "Realized performance (accuracy, precision, recall, f1, roc_auc, log_loss, ece) over the last "
    "labelled predictions (delayed labels joined by request id).",
    ("service", "model", "metric"),
)
MODEL_LABELLED_WINDOW = MetricSpec(
    "inferwatch_model_labelled_window_samples", _G,
    "Labelled predictions in the realized-performance window.",
    ("service", "model"),
)
MODEL_UNLABELLED_RATIO = MetricSpec(
    "inferwatch_model_unlabelled_ratio", _G,
    "Share of tracked predictions still waiting for their label: pending / (pending + labelled window).",
    ("service", "model"),
)
MODEL_ESTIMATED = MetricSpec(
    "inferwatch_model_estimated", _G,
    "Estimated performance (CBPE) of the last closed window without labels: the estimate and its "
    "lower and upper sampling-error bounds (bound label).",
    ("service", "model", "metric", "bound"),
)
MODEL_ESTIMATE_OUTSIDE_SUPPORT = MetricSpec(
    "inferwatch_model_estimate_outside_support_ratio", _G,
    "Share of the last closed window's scores outside the reference's range (the estimate may not hold).",
    ("service", "model"),
)
MODEL_ESTIMATED_WINDOW = MetricSpec(
    "inferwatch_model_estimated_window_samples", _G,
    "Predictions in the last closed window that the estimated performance was computed from.",
    ("service", "model"),
)
MODEL_REFERENCE_PERFORMANCE = MetricSpec(
    "inferwatch_model_reference_performance", _G,
    "Realized performance on the labelled reference the estimator was fitted on "
    "(the level alerts compare with).",
    ("service", "model", "metric"),
)
MODEL_LABELS_TOTAL = MetricSpec(
    "inferwatch_model_labels_total", _C,
    "Label and prediction bookkeeping of realized performance (joined, unmatched, expired, invalid).",
    ("service", "model", "outcome"),
)

# --- business: business impact -----------------------------------------------
CONVERSION_RATE = MetricSpec(
    "inferwatch_conversion_rate", _G, "Conversion rate of an experiment variant.",
    ("experiment", "variant"),
)
ABTEST_P_VALUE = MetricSpec(
    "inferwatch_abtest_p_value", _G, "p-value of the A/B test difference in conversion rate.",
    ("experiment",),
)
ABTEST_SEQUENTIAL_P_VALUE = MetricSpec(
    "inferwatch_abtest_sequential_p_value", _G,
    "Always-valid p-value of the A/B test (mSPRT, normal mixture); safe to look at any time.",
    ("experiment",),
)
ABTEST_DIFFERENCE = MetricSpec(
    "inferwatch_abtest_difference", _G,
    "Conversion rate of the second variant minus the first (variants in sorted order).",
    ("experiment",),
)
EXPERIMENT_OUTCOMES_TOTAL = MetricSpec(
    "inferwatch_experiment_outcomes_total", _C, "Outcomes observed per experiment variant.",
    ("experiment", "variant"),
)
EXPERIMENT_CONVERSIONS_TOTAL = MetricSpec(
    "inferwatch_experiment_conversions_total", _C, "Converted outcomes per experiment variant.",
    ("experiment", "variant"),
)

# --- collect: infrastructure (node_exporter and DCGM exporter names) ---------
# Names, help texts and units are node_exporter's (1.5) and dcgm-exporter's
# (etc/default-counters.csv, dcp-metrics-included.csv) so their dashboards and
# rules work unchanged; the inferwatch_* ones are ours.
_U = MetricKind.UNTYPED
NODE_CPU_SECONDS_TOTAL = MetricSpec(
    "node_cpu_seconds_total", _C, "Seconds the CPUs spent in each mode.", ("cpu", "mode"), "seconds",
)


def _meminfo(field: str) -> MetricSpec:
    return MetricSpec(
        f"node_memory_{field}_bytes", _G, f"Memory information field {field}_bytes.", (), "bytes",
    )


NODE_MEMORY_MEMTOTAL = _meminfo("MemTotal")
NODE_MEMORY_MEMAVAILABLE = _meminfo("MemAvailable")
NODE_MEMORY_MEMFREE = _meminfo("MemFree")
NODE_MEMORY_BUFFERS = _meminfo("Buffers")
NODE_MEMORY_CACHED = _meminfo("Cached")
NODE_MEMORY_SWAPTOTAL = _meminfo("SwapTotal")
NODE_MEMORY_SWAPFREE = _meminfo("SwapFree")
NODE_LOAD1 = MetricSpec("node_load1", _G, "1m load average.")
NODE_LOAD5 = MetricSpec("node_load5", _G, "5m load average.")
NODE_LOAD15 = MetricSpec("node_load15", _G, "15m load average.")
# The model-server process (prometheus-client's own process_*/python_gc_* are
# left to it: these names never collide with its default collectors).
PROCESS_RSS = MetricSpec(
    "inferwatch_process_resident_memory_bytes", _G,
    "Resident memory of the monitored model-server process in bytes.", (), "bytes",
)
PROCESS_CPU_SECONDS_TOTAL = MetricSpec(
    "inferwatch_process_cpu_seconds_total", _C,
    "CPU seconds the monitored model-server process spent, by mode (user, system).",
    ("mode",), "seconds",
)
PROCESS_THREADS = MetricSpec(
    "inferwatch_process_threads", _G, "Threads of the monitored model-server process.",
)
PYTHON_GC_COLLECTIONS_TOTAL = MetricSpec(
    "inferwatch_python_gc_collections_total", _C,
    "Python garbage collections of this process since the collector started, by generation.",
    ("generation",),
)
PYTHON_GC_PAUSE_SECONDS_TOTAL = MetricSpec(
    "inferwatch_python_gc_pause_seconds_total", _C,
    "Seconds this process was paused in Python garbage collection, by generation (gc.callbacks).",
    ("generation",), "seconds",
)
PYTHON_GC_COLLECTED_TOTAL = MetricSpec(
    "inferwatch_python_gc_collected_objects_total", _C,
    "Objects freed by Python garbage collection in this process, by generation.", ("generation",),
)
GPU_COLLECTOR_UP = MetricSpec(
    "inferwatch_gpu_collector_up", _G,
    "1 if the GPU collector reads NVML, 0 if not (reason says why: no_pynvml, no_nvml_library, "
    "nvml_init_failed, no_gpu).",
    ("reason",),
)
COLLECT_DURATION = MetricSpec(
    "inferwatch_collect_duration_seconds", _G,
    "Wall-clock seconds the last collection took, by collector (host, process, gpu).",
    ("collector",), "seconds",
)
_GPU = ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname")
DCGM_GPU_UTIL = MetricSpec("DCGM_FI_DEV_GPU_UTIL", _G, "GPU utilization (in %).", _GPU, "percent")
DCGM_MEM_COPY_UTIL = MetricSpec(
    "DCGM_FI_DEV_MEM_COPY_UTIL", _G, "Memory utilization (in %).", _GPU, "percent",
)
DCGM_FB_USED = MetricSpec("DCGM_FI_DEV_FB_USED", _G, "Framebuffer memory used (in MiB).", _GPU, "MiB")
DCGM_FB_FREE = MetricSpec("DCGM_FI_DEV_FB_FREE", _G, "Framebuffer memory free (in MiB).", _GPU, "MiB")
DCGM_FB_TOTAL = MetricSpec(
    "DCGM_FI_DEV_FB_TOTAL", _G, "Framebuffer memory total (in MiB).", _GPU, "MiB",
)
DCGM_PCIE_TX = MetricSpec(
    "DCGM_FI_PROF_PCIE_TX_BYTES", _G,
    "The rate of data transmitted over the PCIe bus - including both protocol headers and data "
    "payloads - in bytes per second.", _GPU, "bytes_per_second",
)
DCGM_PCIE_RX = MetricSpec(
    "DCGM_FI_PROF_PCIE_RX_BYTES", _G,
    "The rate of data received over the PCIe bus - including both protocol headers and data "
    "payloads - in bytes per second.", _GPU, "bytes_per_second",
)
DCGM_PCIE_LINK_GEN = MetricSpec(
    "DCGM_FI_DEV_PCIE_LINK_GEN", _G, "PCIe current link generation.", _GPU,
)
DCGM_PCIE_LINK_WIDTH = MetricSpec(
    "DCGM_FI_DEV_PCIE_LINK_WIDTH", _G, "PCIe current link width (lanes).", _GPU,
)
DCGM_PCIE_MAX_LINK_GEN = MetricSpec(
    "DCGM_FI_DEV_PCIE_MAX_LINK_GEN", _G, "PCIe maximum link generation.", _GPU,
)
DCGM_PCIE_MAX_LINK_WIDTH = MetricSpec(
    "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", _G, "PCIe maximum link width (lanes).", _GPU,
)
# DCGM types these two "counter" without the _total suffix; exposed untyped so
# the names stay DCGM's and promtool's counter lint does not apply.
DCGM_PCIE_REPLAY = MetricSpec(
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", _U, "Total number of PCIe retries.", _GPU,
)
DCGM_ENERGY = MetricSpec(
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", _U,
    "Total energy consumption since boot (in mJ).", _GPU, "mJ",
)
DCGM_SM_CLOCK = MetricSpec("DCGM_FI_DEV_SM_CLOCK", _G, "SM clock frequency (in MHz).", _GPU, "MHz")
DCGM_MEM_CLOCK = MetricSpec(
    "DCGM_FI_DEV_MEM_CLOCK", _G, "Memory clock frequency (in MHz).", _GPU, "MHz",
)
DCGM_CLOCKS_EVENT_REASONS = MetricSpec(
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", _G,
    "Current clock event (throttle) reasons, a bitmask of DCGM_CLOCKS_EVENT_REASON_* values.", _GPU,
)
GPU_CLOCK_EVENT_ACTIVE = MetricSpec(
    "inferwatch_gpu_clock_event_active", _G,
    "1 while a clock event (throttle) reason is active (gpu_idle, power_cap, hw_slowdown, "
    "sw_thermal, hw_thermal, hw_power_brake, ...), else 0.",
    (*_GPU, "reason"),
)
DCGM_GPU_TEMP = MetricSpec("DCGM_FI_DEV_GPU_TEMP", _G, "GPU temperature (in C).", _GPU, "celsius")
DCGM_POWER_USAGE = MetricSpec("DCGM_FI_DEV_POWER_USAGE", _G, "Power draw (in W).", _GPU, "watts")
DCGM_POWER_LIMIT = MetricSpec(
    "DCGM_FI_DEV_POWER_MGMT_LIMIT", _G, "Current power limit of the device (in W).", _GPU, "watts",
)
DCGM_XID_ERRORS = MetricSpec(
    "DCGM_FI_DEV_XID_ERRORS", _G, "Value of the last XID error encountered.", _GPU,
)
GPU_XID_ERRORS_TOTAL = MetricSpec(
    "inferwatch_gpu_xid_errors_total", _C,
    "XID errors NVML reported for the GPU since the collector started.", _GPU,
)
# DCGM's profiling fields (dcgm-exporter's names, 0..1 ratios and bytes/s), read through
# NVML's GPM (Hopper and later) between two collections, so no call waits for a window.
DCGM_PROF_GR_ENGINE_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE", _G, "Ratio of time the graphics engine is active.", _GPU, "ratio",
)
DCGM_PROF_SM_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_SM_ACTIVE", _G,
    "The ratio of cycles an SM has at least 1 warp assigned (averaged over all SMs).", _GPU, "ratio",
)
DCGM_PROF_SM_OCCUPANCY = MetricSpec(
    "DCGM_FI_PROF_SM_OCCUPANCY", _G,
    "The ratio of number of warps resident on an SM to the maximum (averaged over all SMs).", _GPU, "ratio",
)
DCGM_PROF_PIPE_TENSOR_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", _G, "Ratio of cycles the tensor (HMMA) pipe is active.", _GPU, "ratio",
)
DCGM_PROF_DRAM_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_DRAM_ACTIVE", _G,
    "Ratio of cycles the device memory interface is active sending or receiving data.", _GPU, "ratio",
)
DCGM_PROF_PIPE_FP64_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_PIPE_FP64_ACTIVE", _G, "Ratio of cycles the fp64 pipes are active.", _GPU, "ratio",
)
DCGM_PROF_PIPE_FP32_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_PIPE_FP32_ACTIVE", _G, "Ratio of cycles the fp32 pipes are active.", _GPU, "ratio",
)
DCGM_PROF_PIPE_FP16_ACTIVE = MetricSpec(
    "DCGM_FI_PROF_PIPE_FP16_ACTIVE", _G, "Ratio of cycles the fp16 pipes are active.", _GPU, "ratio",
)
DCGM_PROF_NVLINK_TX = MetricSpec(
    "DCGM_FI_PROF_NVLINK_TX_BYTES", _G,
    "The rate of data transmitted over NVLink, not including protocol headers, in bytes per second.",
    _GPU, "bytes_per_second",
)
DCGM_PROF_NVLINK_RX = MetricSpec(
    "DCGM_FI_PROF_NVLINK_RX_BYTES", _G,
    "The rate of data received over NVLink, not including protocol headers, in bytes per second.",
    _GPU, "bytes_per_second",
)

# --- edge: the agent's own series (sent like any other) and the server's view of devices ---
EDGE_SPOOL_BACKLOG = MetricSpec(
    "inferwatch_edge_spool_backlog_samples", _G, "Samples in the edge agent's spool, not yet delivered.",
)
EDGE_SPOOL_DROPPED_TOTAL = MetricSpec(
    "inferwatch_edge_spool_dropped_total", _C,
    "Samples the edge agent's spool dropped, by reason (age, bytes, disk_full).", ("reason",),
)
EDGE_DEADBAND_SAMPLES_TOTAL = MetricSpec(
    "inferwatch_edge_deadband_samples_total", _C,
    "Samples the edge agent read, by outcome (sent, held by the deadband).", ("outcome",),
)
EDGE_HEARTBEAT_SECONDS = MetricSpec(
    "inferwatch_edge_heartbeat_seconds", _G, "The edge agent's heartbeat: a quiet series reports this often.",
    unit="seconds",
)
EDGE_LAST_CONTACT = MetricSpec(
    "inferwatch_edge_last_contact_timestamp_seconds", _G,
    "When the server last received a batch from the device (server time).", ("device",), "seconds",
)
EDGE_DEVICE_SILENCE = MetricSpec(
    "inferwatch_edge_device_silence_seconds", _G,
    "Seconds since the server last received a batch from the device.", ("device",), "seconds",
)
EDGE_DEVICE_HEARTBEAT = MetricSpec(
    "inferwatch_edge_device_heartbeat_seconds", _G,
    "The device's heartbeat as its last batch announced it (a quiet series reports this often).",
    ("device",), "seconds",
)
EDGE_INGESTED_SAMPLES_TOTAL = MetricSpec(
    "inferwatch_edge_ingested_samples_total", _C,
    "Samples the server accepted from edge devices, by device.", ("device",),
)
EDGE_DUPLICATE_BATCHES_TOTAL = MetricSpec(
    "inferwatch_edge_duplicate_batches_total", _C,
    "Edge batches received again (a retry of one already stored) and not stored twice.", ("device",),
)

# --- server: scrape health ---------------------------------------------------
UP = MetricSpec("up", _G, "1 if the last scrape of the target succeeded, 0 if not.", ("job", "instance"))

# --- server: its own /metrics (Prometheus's and Alertmanager's self-metrics, renamed) ---
BUILD_INFO = MetricSpec(
    "inferwatch_build_info", _G, "inferwatch version and the Python it runs on (always 1).",
    ("version", "python"),
)
RULE_EVALUATIONS_TOTAL = MetricSpec(
    "inferwatch_rule_evaluations_total", _C, "Rule evaluation rounds.",
)
RULE_EVALUATION_FAILURES_TOTAL = MetricSpec(
    "inferwatch_rule_evaluation_failures_total", _C, "Rule evaluation rounds that raised.",
)
RULE_EVALUATION_SECONDS_TOTAL = MetricSpec(
    "inferwatch_rule_evaluation_duration_seconds_total", _C,
    "Seconds spent evaluating rules, over all rounds.", (), "seconds",
)
RULE_GROUP_LAST_DURATION = MetricSpec(
    "inferwatch_rule_group_last_duration_seconds", _G, "Duration of the last evaluation round.",
    (), "seconds",
)
RULE_GROUP_LAST_EVALUATION = MetricSpec(
    "inferwatch_rule_group_last_evaluation_timestamp_seconds", _G,
    "Time of the last evaluation round (0 before the first).", (), "seconds",
)
RULE_GROUP_RULES = MetricSpec("inferwatch_rule_group_rules", _G, "Rules loaded.")
ALERTS = MetricSpec("inferwatch_alerts", _G, "Active alerts by state.", ("state",))
TARGETS = MetricSpec("inferwatch_targets", _G, "Scrape targets by health.", ("health",))
STORAGE_BYTES = MetricSpec(
    "inferwatch_storage_bytes", _G, "Bytes on disk of the SQLite store (with its WAL).", (), "bytes",
)
STORAGE_CHECKPOINTS_TOTAL = MetricSpec(
    "inferwatch_storage_checkpoints_total", _C,
    "WAL checkpoints of the SQLite store run by its background thread (they sync the disk).",
)
STORAGE_CHECKPOINT_FAILURES_TOTAL = MetricSpec(
    "inferwatch_storage_checkpoint_failures_total", _C,
    "WAL checkpoints of the SQLite store that failed (a full disk); the WAL grows meanwhile.",
)
STORAGE_SERIES = MetricSpec(
    "inferwatch_storage_series", _G, "Series the store holds (they count toward server.limits.max_series).",
)
STORAGE_SERIES_LIMIT = MetricSpec(
    "inferwatch_storage_series_limit", _G, "server.limits.max_series: new series beyond it are refused "
    "(0: no limit).",
)
DISCARDED_SAMPLES_TOTAL = MetricSpec(
    "inferwatch_discarded_samples_total", _C,
    "Samples refused at ingest, by the limit or check that refused them (their batch is refused whole).",
    ("reason",),
)
CONFIG_LAST_RELOAD_SUCCESSFUL = MetricSpec(
    "inferwatch_config_last_reload_successful", _G, "1 if the last config load or reload succeeded.",
)
CONFIG_LAST_RELOAD_SUCCESS = MetricSpec(
    "inferwatch_config_last_reload_success_timestamp_seconds", _G,
    "Time of the last successful config load or reload.", (), "seconds",
)
NOTIFICATIONS_TOTAL = MetricSpec(
    "inferwatch_notifications_total", _C, "Notifications by receiver and status (sent, failed).",
    ("receiver", "status"),
)
ACTIONS_TOTAL = MetricSpec(
    "inferwatch_actions_total", _C, "Action runs by action and result (ok, failed, deduplicated).",
    ("action", "result"),
)
NOTIFICATION_QUEUE_LENGTH = MetricSpec(
    "inferwatch_notification_queue_length", _G,
    "Notifications owed to a receiver (waiting, retrying, rate-limited or in flight).", ("receiver",),
)
NOTIFICATION_QUEUE_OLDEST_AGE = MetricSpec(
    "inferwatch_notification_queue_oldest_age_seconds", _G,
    "Age of the oldest notification owed to a receiver (0 when none).", ("receiver",), "seconds",
)

_REMOTE = ("remote_name", "url")
REMOTE_WRITE_PENDING = MetricSpec(
    "inferwatch_remote_write_samples_pending", _G,
    "Samples stored and queued for a remote-write receiver, not yet acknowledged.", _REMOTE,
)
REMOTE_WRITE_SENT_TOTAL = MetricSpec(
    "inferwatch_remote_write_samples_sent_total", _C, "Samples a remote-write receiver acknowledged (2xx).",
    _REMOTE,
)
REMOTE_WRITE_FAILED_TOTAL = MetricSpec(
    "inferwatch_remote_write_samples_failed_total", _C,
    "Samples a remote-write receiver refused with a 4xx that is not retried (dropped).", _REMOTE,
)
REMOTE_WRITE_DROPPED_TOTAL = MetricSpec(
    "inferwatch_remote_write_samples_dropped_total", _C,
    "Samples dropped unsent: the queue's backlog went over its bounds, or the queue could not log them.",
    _REMOTE,
)
REMOTE_WRITE_RETRIES_TOTAL = MetricSpec(
    "inferwatch_remote_write_retries_total", _C,
    "Remote-write requests retried (5xx, 429 or a network error).", _REMOTE,
)


def _index(*specs: MetricSpec) -> Mapping[str, MetricSpec]:
    out: dict[str, MetricSpec] = {}
    for spec in specs:
        if spec.name in out:
            raise AssertionError(f"metric {spec.name} listed twice")
        out[spec.name] = spec
    return out


CATALOG: Mapping[str, MetricSpec] = _index(
    REQUESTS_TOTAL, REQUEST_DURATION, INFLIGHT_REQUESTS, SDK_DROPPED_TOTAL, SDK_QUEUE_CAPACITY,
    SDK_INVALID_TOTAL, SDK_ERRORS_TOTAL, GENERATION_REQUESTS_TOTAL, GENERATION_TTFT, GENERATION_TPOT,
    GENERATION_DURATION,
    GENERATION_QUEUE, GENERATION_INPUT_TOKENS_TOTAL, GENERATION_OUTPUT_TOKENS_TOTAL,
    GENERATION_TOKENS_PER_SECOND, GENERATION_REQUEST_INPUT_TOKENS, GENERATION_REQUEST_OUTPUT_TOKENS,
    GENERATION_FINISH_REASONS_TOTAL, GENERATION_GOOD_REQUESTS_TOTAL, GENERATION_TARGET_SECONDS,
    GENERATION_TENANT_REQUESTS_TOTAL, GENERATION_COST_TOTAL, ENGINE_REQUESTS_RUNNING, ENGINE_REQUESTS_WAITING,
    ENGINE_KV_CACHE_USAGE, ENGINE_PREEMPTIONS_TOTAL, ENGINE_PREFIX_CACHE_QUERIES_TOTAL,
    ENGINE_PREFIX_CACHE_HITS_TOTAL, STAGE_DURATION, STAGE_ERRORS_TOTAL, TRACE_SPANS_TOTAL,
    FEATURE_PSI, ANOMALOUS_SAMPLES_RATIO, PREDICTION_CONFIDENCE,
    FEATURE_PSI_CRITICAL, DRIFT_WINDOW_SAMPLES, FEATURE_DATA_QUALITY, DATA_QUALITY_WINDOW,
    QUALITY_INVALID_TOTAL, PREDICTION_CONFIDENCE_MEAN,
    LOW_CONFIDENCE_RATIO, PREDICTION_ENTROPY, CONFIDENCE_PSI,
    EMBEDDING_DRIFT_MMD, EMBEDDING_DRIFT_MMD_CRITICAL, EMBEDDING_DRIFT_AUC, EMBEDDING_DRIFT_AUC_CRITICAL,
    EMBEDDING_WINDOW_SAMPLES, EMBEDDING_INVALID_TOTAL,
    MODEL_REALIZED, MODEL_LABELLED_WINDOW, MODEL_UNLABELLED_RATIO, MODEL_LABELS_TOTAL,
    MODEL_ESTIMATED, MODEL_ESTIMATE_OUTSIDE_SUPPORT, MODEL_ESTIMATED_WINDOW, MODEL_REFERENCE_PERFORMANCE,
    CONVERSION_RATE, ABTEST_P_VALUE,
    ABTEST_SEQUENTIAL_P_VALUE, ABTEST_DIFFERENCE, EXPERIMENT_OUTCOMES_TOTAL, EXPERIMENT_CONVERSIONS_TOTAL,
    NODE_CPU_SECONDS_TOTAL, NODE_MEMORY_MEMTOTAL, NODE_MEMORY_MEMAVAILABLE, NODE_MEMORY_MEMFREE,
    NODE_MEMORY_BUFFERS, NODE_MEMORY_CACHED, NODE_MEMORY_SWAPTOTAL, NODE_MEMORY_SWAPFREE,
    NODE_LOAD1, NODE_LOAD5, NODE_LOAD15,
    PROCESS_RSS, PROCESS_CPU_SECONDS_TOTAL, PROCESS_THREADS, PYTHON_GC_COLLECTIONS_TOTAL,
    PYTHON_GC_PAUSE_SECONDS_TOTAL, PYTHON_GC_COLLECTED_TOTAL, GPU_COLLECTOR_UP, COLLECT_DURATION,
    DCGM_GPU_UTIL, DCGM_MEM_COPY_UTIL, DCGM_FB_USED, DCGM_FB_FREE, DCGM_FB_TOTAL,
    DCGM_PCIE_TX, DCGM_PCIE_RX, DCGM_PCIE_LINK_GEN, DCGM_PCIE_LINK_WIDTH, DCGM_PCIE_MAX_LINK_GEN,
    DCGM_PCIE_MAX_LINK_WIDTH, DCGM_PCIE_REPLAY, DCGM_ENERGY, DCGM_SM_CLOCK, DCGM_MEM_CLOCK,
    DCGM_CLOCKS_EVENT_REASONS, GPU_CLOCK_EVENT_ACTIVE, DCGM_GPU_TEMP, DCGM_POWER_USAGE,
    DCGM_POWER_LIMIT, DCGM_XID_ERRORS, GPU_XID_ERRORS_TOTAL,
    DCGM_PROF_GR_ENGINE_ACTIVE, DCGM_PROF_SM_ACTIVE, DCGM_PROF_SM_OCCUPANCY, DCGM_PROF_PIPE_TENSOR_ACTIVE,
    DCGM_PROF_DRAM_ACTIVE, DCGM_PROF_PIPE_FP64_ACTIVE, DCGM_PROF_PIPE_FP32_ACTIVE, DCGM_PROF_PIPE_FP16_ACTIVE,
    DCGM_PROF_NVLINK_TX, DCGM_PROF_NVLINK_RX,
    UP, BUILD_INFO, RULE_EVALUATIONS_TOTAL, RULE_EVALUATION_FAILURES_TOTAL, RULE_EVALUATION_SECONDS_TOTAL,
    RULE_GROUP_LAST_DURATION, RULE_GROUP_LAST_EVALUATION, RULE_GROUP_RULES, ALERTS, TARGETS,
    STORAGE_BYTES, STORAGE_CHECKPOINTS_TOTAL, STORAGE_CHECKPOINT_FAILURES_TOTAL,
    STORAGE_SERIES, STORAGE_SERIES_LIMIT, DISCARDED_SAMPLES_TOTAL,
    NOTIFICATIONS_TOTAL, ACTIONS_TOTAL, CONFIG_LAST_RELOAD_SUCCESSFUL,
    CONFIG_LAST_RELOAD_SUCCESS,
    NOTIFICATION_QUEUE_LENGTH, NOTIFICATION_QUEUE_OLDEST_AGE,
    EDGE_SPOOL_BACKLOG, EDGE_SPOOL_DROPPED_TOTAL, EDGE_DEADBAND_SAMPLES_TOTAL, EDGE_HEARTBEAT_SECONDS,
    EDGE_LAST_CONTACT, EDGE_DEVICE_SILENCE, EDGE_DEVICE_HEARTBEAT, EDGE_INGESTED_SAMPLES_TOTAL,
    EDGE_DUPLICATE_BATCHES_TOTAL,
    REMOTE_WRITE_PENDING, REMOTE_WRITE_SENT_TOTAL, REMOTE_WRITE_FAILED_TOTAL, REMOTE_WRITE_DROPPED_TOTAL,
    REMOTE_WRITE_RETRIES_TOTAL,
)

LATENCY_BUCKETS: tuple[float, ...] = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)
"""The SDK's default latency histogram bounds: inference latencies, 1 ms to 10 s, x2 / x2.5 steps."""
