"""The SDK imports light: no pydantic, starlette, numpy, OpenTelemetry or prometheus-client until a
feature needs them (import time itself is measured by ``benchmarks/bench_import.py``, not here)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from inferwatch import ConfigError
from inferwatch.config import parse_config
from inferwatch.sdk import DEFAULT_BUCKETS, Monitor, SdkConfig

HEAVY = ("pydantic", "starlette", "numpy", "opentelemetry", "httpx", "yaml", "inferwatch.config",
         "inferwatch.tracing",
         # loaded by the first exposition, by multiprocess mode, by the first regex matcher:
         "prometheus_client", "psutil", "sqlite3", "re2", "http.server", "asyncio",
         "inferwatch.sdk.multiproc._multiproc",
         # model runtimes: imported by onnx_session / a wrapped session's own caller, never by the SDK
         "onnxruntime", "onnx", "tensorrt")


def _loaded(code: str) -> list[str]:
    """The HEAVY modules loaded after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def test_importing_the_sdk_loads_nothing_heavy() -> None:
    # rule: `import inferwatch.sdk` and the README's `from inferwatch import Monitor` load no
    # pydantic (config), starlette, numpy or OpenTelemetry
    assert _loaded("import inferwatch.sdk\nfrom inferwatch import Monitor") == []


def test_a_monitor_that_only_records_loads_no_prometheus_client() -> None:
    # rule: prometheus-client is the renderer: recording, aggregating and flushing do without it, and
    # the first exposition (here metrics_text) loads it
    code = ("from inferwatch import Monitor\nm = Monitor(service='s')\n"
            "m.record_request('/p', 200, 0.01)\nassert m.flush()\n")
    assert _loaded(code) == []
    assert "prometheus_client" in _loaded(code + "assert 'inferwatch_requests_total' in m.metrics_text()")


def test_recording_and_exposing_load_neither_pydantic_nor_starlette() -> None:
    # rule: the plain path (a monitor, small batches, /metrics text) stays without them too
    code = ("from inferwatch import Monitor\nm = Monitor(service='s')\n"
            "m.record_request('/p', 200, 0.01)\nm.metrics_text()\nm.close()")
    assert [m for m in _loaded(code) if m in ("pydantic", "starlette", "inferwatch.config")] == []


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"queue_size": 0}, "sdk.queue_size"),
    ({"queue_size": True}, "sdk.queue_size"),
    ({"buckets": ()}, "sdk.buckets"),
    ({"buckets": (0.5, 0.1)}, "sdk.buckets"),
    ({"buckets": (0.1, float("inf"))}, "sdk.buckets"),
    ({"buckets": "0.1"}, "sdk.buckets"),
])
def test_sdk_config_is_validated_without_pydantic(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        SdkConfig(**kwargs)  # type: ignore[arg-type]


def test_monitor_takes_the_yaml_sdk_section_too() -> None:
    # rule: the server config's `sdk:` section (pydantic) configures a Monitor as the dataclass does
    yaml_cfg = parse_config("sdk: {queue_size: 128, buckets: [0.1, 1.0]}").sdk
    with Monitor("svc", config=yaml_cfg) as m:  # type: ignore[arg-type]
        assert m.config == SdkConfig(queue_size=128, buckets=(0.1, 1.0))
    assert SdkConfig().buckets == DEFAULT_BUCKETS == parse_config("").sdk.buckets
    assert SdkConfig(buckets=[0.1, 1.0]).buckets == (0.1, 1.0)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="config must be an SdkConfig"):
        Monitor("svc", config="fast")  # type: ignore[arg-type]
