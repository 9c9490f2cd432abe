"""The environment variables, re-exported from ``inferwatch._env`` (their one home, light to import)."""

from inferwatch._env import (
    ENV_API_TOKEN,
    ENV_CONFIG,
    ENV_DATA_DIR,
    ENV_EDGE_TOKEN,
    ENV_HA_DATABASE,
    ENV_HEARTBEAT_KEY,
    ENV_HEARTBEAT_URL,
    ENV_MULTIPROC_DIR,
    ENV_PROMQL_TESTDATA,
    ENV_REQUIRE_TOOLS,
    ENVIRONMENT,
)

__all__ = [
    "ENVIRONMENT", "ENV_API_TOKEN", "ENV_CONFIG", "ENV_DATA_DIR", "ENV_EDGE_TOKEN", "ENV_HA_DATABASE",
    "ENV_HEARTBEAT_KEY", "ENV_HEARTBEAT_URL", "ENV_MULTIPROC_DIR", "ENV_PROMQL_TESTDATA", "ENV_REQUIRE_TOOLS",
]
