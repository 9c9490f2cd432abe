"""The YAML config, validated with pydantic; defaults are DESIGN.md's tables.

>>> from inferwatch.config import parse_config
>>> parse_config("server: {evaluation_interval: 30s}").server.evaluation_interval
30.0
"""

from inferwatch import _env as env
from inferwatch.config._alerting import AlertingConfig
from inferwatch.config._alertmanagers import AlertmanagerSpec
from inferwatch.config._baseline import BaselineConfig
from inferwatch.config._collect import CollectConfig
from inferwatch.config._edge import EdgeConfig
from inferwatch.config._limits import HttpLimits, IngestLimits, QueryLimits
from inferwatch.config._load import load_config, parse_config
from inferwatch.config._quality import QualityConfig
from inferwatch.config._remote_write import RemoteWriteQueue, RemoteWriteSpec
from inferwatch.config._root import Config
from inferwatch.config._rules import RulesConfig, RuleSpec
from inferwatch.config._scrape import ScrapeConfig, ScrapeTarget
from inferwatch.config._sdk import DEFAULT_BUCKETS, SdkConfig
from inferwatch.config._server import ServerConfig, StorageConfig
from inferwatch.config._slo import DEFAULT_MIN_EVENTS, SloFileRef, SloSpec, SloTiers
from inferwatch.config._types import Duration, FrozenModel, Secret

__all__ = [
    "DEFAULT_BUCKETS",
    "DEFAULT_MIN_EVENTS",
    "AlertingConfig",
    "AlertmanagerSpec",
    "BaselineConfig",
    "CollectConfig",
    "Config",
    "Duration",
    "EdgeConfig",
    "FrozenModel",
    "HttpLimits",
    "IngestLimits",
    "QualityConfig",
    "QueryLimits",
    "RemoteWriteQueue",
    "RemoteWriteSpec",
    "RuleSpec",
    "RulesConfig",
    "ScrapeConfig",
    "ScrapeTarget",
    "SdkConfig",
    "Secret",
    "ServerConfig",
    "SloFileRef",
    "SloSpec",
    "SloTiers",
    "StorageConfig",
    "env",
    "load_config",
    "parse_config",
]
