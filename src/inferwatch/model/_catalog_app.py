"""The catalog's application sections: service performance and generation (sdk),
model quality, business impact."""

from __future__ import annotations

from inferwatch.model._metric_spec import _C, _G, _H, _SVC, MetricSpec

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
GENERATION_TENANT_DAILY_BUDGET = MetricSpec(
    "inferwatch_generation_tenant_daily_budget", _G,
    "A tenant's daily spend budget (Monitor.set_tenant_budgets), in its currency: what "
    "TenantSpendOverBudget compares inferwatch_generation_cost_total with.",
    ("service", "tenant", "currency"),
)
_QUALITY = (*_GEN, "prompt_version", "tenant")
SCORE_BUCKETS: tuple[float, ...] = (
    0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0)
"""``inferwatch_generation_score``'s bounds: 0-1 judge scores in tenths, then rubric grades up to 10."""
GENERATION_SCORE = MetricSpec(
    "inferwatch_generation_score", _H,
    "Evaluations of generations (a judge's 0-1 score, a rubric grade...), by evaluation name; "
    "mean: _sum / _count.", (*_QUALITY, "name"),
)
GENERATION_FEEDBACK_TOTAL = MetricSpec(
    "inferwatch_generation_feedback_total", _C,
    "User feedback on generations (sentiment positive, negative or neutral), joined to the "
    "generation's labels by its id (unknown ids: label values unknown).", (*_QUALITY, "sentiment"),
)
GENERATION_FLAGS_TOTAL = MetricSpec(
    "inferwatch_generation_flags_total", _C,
    "Generations flagged (refused, guardrail, schema_invalid, truncated) and the detail given.",
    (*_QUALITY, "flag", "detail"),
)
JUDGE_REQUESTS_TOTAL = MetricSpec(
    "inferwatch_judge_requests_total", _C,
    "Generations handed to the SDK's asynchronous judge, by outcome (ok, error, timeout, invalid: no "
    "score in its answer, dropped: the queue was full, budget: the daily tokens were spent); the "
    "judge's failures, never the service's.", ("service", "outcome"),
)
JUDGE_QUEUE_DEPTH = MetricSpec(
    "inferwatch_judge_queue_depth", _G, "Generations waiting for the SDK's asynchronous judge.", ("service",),
)
JUDGE_TOKENS_TOTAL = MetricSpec(
    "inferwatch_judge_tokens_total", _C,
    "Tokens the asynchronous judge's answers reported (usage), by type (prompt, completion).",
    ("service", "type"),
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
    "reference profile (check: missing, out_of_range, unseen, type_error).",
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
