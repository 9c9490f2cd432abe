"""Every environment variable inferwatch reads, documented in one place.

At the top of the package (beside ``_exceptions``), so the SDK and the edge agent read them
without importing ``config`` (pydantic); ``inferwatch.config.env`` is this module.
"""

from __future__ import annotations

__all__ = [
    "ENVIRONMENT", "ENV_API_TOKEN", "ENV_CONFIG", "ENV_DATA_DIR", "ENV_EDGE_TOKEN", "ENV_HA_DATABASE",
    "ENV_HEARTBEAT_KEY", "ENV_HEARTBEAT_URL", "ENV_JUDGE_API_KEY", "ENV_KUBERNETES_HOST",
    "ENV_KUBERNETES_PORT", "ENV_MULTIPROC_DIR", "ENV_PROMQL_TESTDATA", "ENV_REQUIRE_TOOLS",
]

ENV_CONFIG = "INFERWATCH_CONFIG"
"""Path of the YAML config used when ``--config`` is not given."""

ENV_DATA_DIR = "INFERWATCH_DATA_DIR"
"""Overrides ``server.data_dir`` (where SQLite files and state live)."""

ENV_API_TOKEN = "INFERWATCH_API_TOKEN"
"""Token for write requests to the server's API (overrides ``server.api_token``)."""

ENV_EDGE_TOKEN = "INFERWATCH_EDGE_TOKEN"
"""The edge agent's upload token (overrides ``upload.token_file``); the agent reads it as
``inferwatch.edge.ENV_EDGE_TOKEN`` (it cannot import config: a test checks both agree)."""

ENV_HEARTBEAT_URL = "INFERWATCH_HEARTBEAT_URL"
"""The dead man's switch's URL (overrides ``alerting.heartbeat.url`` and ``url_file``)."""

ENV_HEARTBEAT_KEY = "INFERWATCH_HEARTBEAT_KEY"
"""The dead man's switch's key: PagerDuty routing key, Opsgenie API key or a bearer token
(overrides ``alerting.heartbeat.key`` and ``key_file``)."""

ENV_JUDGE_API_KEY = "INFERWATCH_JUDGE_API_KEY"
"""SDK: the API key of the asynchronous judge's OpenAI-compatible endpoint (``JudgeConfig.api_key_env``'s
default; sent as ``Authorization: Bearer``, never logged)."""

ENV_MULTIPROC_DIR = "INFERWATCH_MULTIPROC_DIR"
"""SDK: a directory shared by the worker processes of one server; every ``Monitor`` in them
then answers ``/metrics`` for all workers (same as ``Monitor(..., multiprocess_dir=DIR)``)."""

ENV_REQUIRE_TOOLS = "INFERWATCH_REQUIRE_TOOLS"
"""Tests: ``1`` turns a missing external tool (promtool, alertmanager, chromium) into a failure."""

ENV_PROMQL_TESTDATA = "INFERWATCH_PROMQL_TESTDATA"
"""Tests (development only): a directory of Prometheus's ``promql/testdata/*.test`` (v2.42);
set, ``tests/promql/test_testdata.py`` runs every file there against inferwatch's engine."""

ENV_HA_DATABASE = "INFERWATCH_HA_DATABASE"
"""The ``postgresql://`` URL of an HA pair's shared state (when ``ha.database`` and
``ha.database_file`` are not given)."""

ENV_KUBERNETES_HOST = "KUBERNETES_SERVICE_HOST"
"""Set by Kubernetes in every pod: the API server's host (kubernetes_sd_configs without api_server)."""

ENV_KUBERNETES_PORT = "KUBERNETES_SERVICE_PORT"
"""Set by Kubernetes in every pod: the API server's port."""

ENVIRONMENT: dict[str, str] = {
    ENV_CONFIG: "path of the YAML config used when --config is not given",
    ENV_DATA_DIR: "overrides server.data_dir",
    ENV_API_TOKEN: "token for API writes (overrides server.api_token)",
    ENV_EDGE_TOKEN: "the edge agent's upload token (overrides upload.token_file)",
    ENV_HEARTBEAT_URL: "the dead man's switch URL (overrides alerting.heartbeat.url)",
    ENV_HEARTBEAT_KEY: "the dead man's switch key (overrides alerting.heartbeat.key)",
    ENV_JUDGE_API_KEY: "SDK: the asynchronous judge's API key (JudgeConfig.api_key_env)",
    ENV_MULTIPROC_DIR: "SDK: directory shared by a server's worker processes (metrics of all workers)",
    ENV_PROMQL_TESTDATA: "tests: Prometheus's promql/testdata directory, run against the engine",
    ENV_HA_DATABASE: "the postgresql:// URL of an HA pair's shared state (ha.database)",
    ENV_REQUIRE_TOOLS: "tests: 1 makes a missing external tool a failure, not a skip",
    ENV_KUBERNETES_HOST: "set by Kubernetes: the API server kubernetes_sd_configs asks in the cluster",
    ENV_KUBERNETES_PORT: "set by Kubernetes: the API server's port",
}
