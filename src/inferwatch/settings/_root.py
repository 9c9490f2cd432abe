"""The whole YAML config: one section per component, every default from DESIGN.md."""

from __future__ import annotations

from pydantic import Field, ValidationInfo, field_validator

from inferwatch.settings._baseline import BaselineConfig
from inferwatch.settings._collect import CollectConfig
from inferwatch.settings._edge import EdgeConfig
from inferwatch.settings._ha import HAConfig
from inferwatch.settings._quality import QualityConfig
from inferwatch.settings._rules import RulesConfig
from inferwatch.settings._sdk import SdkConfig
from inferwatch.settings._server import ServerConfig, StorageConfig
from inferwatch.settings._slo import SloFileEntry, SloSpec, check_thresholds
from inferwatch.settings._types import FrozenModel
from inferwatch.settings.alerting import BaseAlertingConfig, HeartbeatWatchSpec, check_heartbeats
from inferwatch.settings.scrape import ProbeSpec, ScrapeConfig, check_probes

__all__ = ["BaseConfig"]


class BaseConfig(FrozenModel):
    """The root of ``inferwatch.yaml``; an empty file gives every default."""

    server: ServerConfig = Field(default_factory=ServerConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    scrape: ScrapeConfig = Field(default_factory=ScrapeConfig)
    rules: RulesConfig = Field(default_factory=RulesConfig)
    alerting: BaseAlertingConfig = Field(default_factory=BaseAlertingConfig)
    sdk: SdkConfig = Field(default_factory=SdkConfig)
    quality: QualityConfig = Field(default_factory=QualityConfig)
    collect: CollectConfig = Field(default_factory=CollectConfig)
    baseline: BaselineConfig = Field(default_factory=BaselineConfig)
    edge: EdgeConfig = Field(default_factory=EdgeConfig)
    slos: tuple[SloSpec, ...] = Field((), description="service-level objectives (docs/slo.md)")
    slo_files: tuple[SloFileEntry, ...] = Field((), description="Sloth prometheus/v1 spec files")
    rule_files: tuple[str, ...] = Field(
        (), description="Prometheus rule files (or globs) read as they are: alerting and recording rules "
        "(relative to this file; docs/discovery.md)")
    probes: tuple[ProbeSpec, ...] = Field((), description="synthetic probes of endpoints (docs/probes.md)")
    heartbeats: tuple[HeartbeatWatchSpec, ...] = Field(
        (), description="heartbeats this server expects from others (docs/heartbeats.md)")
    ha: HAConfig | None = Field(None, description="an HA pair over PostgreSQL (docs/ha.md)")

    @field_validator("probes")
    @classmethod
    def _probe_names(cls, v: tuple[ProbeSpec, ...]) -> tuple[ProbeSpec, ...]:
        return check_probes(v)

    @field_validator("heartbeats")
    @classmethod
    def _heartbeat_names(cls, v: tuple[HeartbeatWatchSpec, ...]) -> tuple[HeartbeatWatchSpec, ...]:
        return check_heartbeats(v)

    @field_validator("slos")
    @classmethod
    def _slo_thresholds(cls, v: tuple[SloSpec, ...], info: ValidationInfo) -> tuple[SloSpec, ...]:
        sdk = info.data.get("sdk")  # validated before: a latency SLO needs its bucket (sdk.buckets)
        check_thresholds(v, sdk.buckets if isinstance(sdk, SdkConfig) else SdkConfig().buckets)
        return v
