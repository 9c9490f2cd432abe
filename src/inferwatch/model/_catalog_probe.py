"""The catalog's probe section: blackbox_exporter's names and meanings for what it also measures,
``inferwatch_probe_*`` for the rest (generative timings, golden-set canaries). Every series carries
the probe's labels plus ``probe`` and ``instance``."""

from __future__ import annotations

from inferwatch.model._metric_spec import _C, _G, MetricSpec

_P = ("probe", "instance")

PROBE_SUCCESS = MetricSpec("probe_success", _G, "Whether the probe succeeded (1) or failed (0).", _P)
PROBE_DURATION = MetricSpec(
    "probe_duration_seconds", _G, "How long the probe took to complete, in seconds.", _P, "seconds")
PROBE_HTTP_DURATION = MetricSpec(
    "probe_http_duration_seconds", _G,
    "Duration of the probe's HTTP request by phase (resolve, connect, tls, processing, transfer), "
    "summed over all redirects.", (*_P, "phase"), "seconds")
PROBE_HTTP_STATUS_CODE = MetricSpec(
    "probe_http_status_code", _G, "The final response's HTTP status code (0: no response).", _P)
PROBE_HTTP_CONTENT_LENGTH = MetricSpec(
    "probe_http_content_length", _G, "Length of the HTTP content response (-1: not announced).", _P)
PROBE_HTTP_UNCOMPRESSED_BODY_LENGTH = MetricSpec(
    "probe_http_uncompressed_body_length", _G, "Length of the uncompressed response body read.",
    _P)
PROBE_HTTP_REDIRECTS = MetricSpec("probe_http_redirects", _G, "The number of redirects followed.", _P)
PROBE_HTTP_SSL = MetricSpec(
    "probe_http_ssl", _G, "Whether the final answer came over TLS (1) or not (0).", _P)
PROBE_SSL_EARLIEST_CERT_EXPIRY = MetricSpec(
    "probe_ssl_earliest_cert_expiry", _G, "The expiry of the server's certificate, in Unix seconds.", _P,
    "seconds")
PROBE_FAILED_DUE_TO_REGEX = MetricSpec(
    "probe_failed_due_to_regex", _G, "Whether the probe failed on a body regex (1) or not (0).", _P)
PROBE_FAILED_DUE_TO_JSON = MetricSpec(
    "inferwatch_probe_failed_due_to_json", _G,
    "Whether the probe failed on its json_path condition (1) or not (0).", _P)
PROBE_RUNS_TOTAL = MetricSpec(
    "inferwatch_probe_runs_total", _C, "Probe runs, by result (success, failure, skipped: the last run "
    "was still going).", (*_P, "result"))
PROBE_TTFT = MetricSpec(
    "inferwatch_probe_time_to_first_token_seconds", _G,
    "A generative probe's time to its first streamed token (the whole answer when not streamed).",
    _P, "seconds")
PROBE_TPOT = MetricSpec(
    "inferwatch_probe_time_per_output_token_seconds", _G,
    "A generative probe's mean time per output token after the first.", _P, "seconds")
PROBE_OUTPUT_TOKENS = MetricSpec(
    "inferwatch_probe_output_tokens", _G, "Tokens a generative probe's answer held (usage, else chunks).", _P)
PROBE_CANARY_ANSWERS_TOTAL = MetricSpec(
    "inferwatch_probe_canary_answers_total", _C, "Golden-set answers, by result (right, wrong).",
    (*_P, "result"))
PROBE_CANARY_CASE_RIGHT = MetricSpec(
    "inferwatch_probe_canary_case_right", _G, "Whether the case's last answer was right (1) or wrong (0).",
    (*_P, "case"))
PROBE_CANARY_WRONG_RATIO = MetricSpec(
    "inferwatch_probe_canary_wrong_ratio", _G,
    "Share of wrong golden-set answers over the last N runs (only once N runs are in).", _P)
PROBE_CANARY_WINDOW_ANSWERS = MetricSpec(
    "inferwatch_probe_canary_window_answers", _G, "Golden-set answers the wrong ratio counts (N runs).", _P)
PROBE_CANARY_THRESHOLD = MetricSpec(
    "inferwatch_probe_canary_threshold_ratio", _G, "The golden set's threshold: CanaryWrong above it.", _P)
PROBE_CANARY_EVIDENCE = MetricSpec(
    "inferwatch_probe_canary_evidence_info", _G,
    "The wrong answers behind the wrong ratio (truncated), kept while the ratio stays over its threshold.",
    (*_P, "evidence"))
