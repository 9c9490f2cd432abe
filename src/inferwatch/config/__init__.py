"""The YAML config, validated with pydantic; defaults are DESIGN.md's tables.

>>> from inferwatch.config import parse_config
>>> parse_config("server: {evaluation_interval: 30s}").server.evaluation_interval
30.0
"""

from inferwatch import _env as env
from inferwatch.config._actions import (
    ActionSpec,
    CommandActionSpec,
    DegradeActionSpec,
    HttpActionSpec,
    KubernetesScaleSpec,
    RollbackActionSpec,
)
from inferwatch.config._alerting import AlertingConfig, InhibitRuleSpec, NotifyPolicy, RouteSpec
from inferwatch.config._alertmanagers import AlertmanagerSpec
from inferwatch.config._baseline import BaselineConfig
from inferwatch.config._collect import CollectConfig
from inferwatch.config._edge import EdgeConfig
from inferwatch.config._ha import HAConfig
from inferwatch.config._heartbeat import HeartbeatKind, HeartbeatSenderSpec, HeartbeatWatchSpec
from inferwatch.config._limits import HttpLimits, IngestLimits, QueryLimits
from inferwatch.config._load import load_config, parse_config
from inferwatch.config._message_template import ALERT_FIELDS, TITLE_FIELDS, Labelled, MessageTemplate
from inferwatch.config._oncall import (
    SCHEDULE_PREFIX,
    EscalationSpec,
    EscalationStep,
    HistoryConfig,
    LayerSpec,
    MemberSpec,
    OnCallConfig,
    OverrideSpec,
    ScheduleSpec,
    parse_local_time,
)
from inferwatch.config._outlier import MAD_SCALE, OutlierSpec
from inferwatch.config._probes import (
    GenerativeSpec,
    GoldenSpec,
    ProbeExpect,
    ProbeSpec,
    ProbeTls,
    check_json_path,
)
from inferwatch.config._prometheus_yml import prometheus_config_notes, read_prometheus_jobs
from inferwatch.config._quality import QualityConfig
from inferwatch.config._redact import (
    REDACTED,
    install_log_redaction,
    mask_secret_fields,
    redact_text,
    redact_url,
)
from inferwatch.config._remote_write import RemoteWriteQueue, RemoteWriteSpec
from inferwatch.config._root import Config
from inferwatch.config._rules import (
    ENGINE_PACKS,
    AbTestPValueSignal,
    AnomalousRatioSignal,
    CpuUtilizationSignal,
    DynamicThreshold,
    ErrorRatioSignal,
    ExprSignal,
    FeaturePsiSignal,
    GpuMemoryRatioSignal,
    LatencyQuantileSignal,
    MetricSignal,
    RuleOverride,
    RulesConfig,
    RuleSpec,
    SignalSpec,
    UnavailableRatioSignal,
    UpSignal,
)
from inferwatch.config._scrape import ScrapeTarget
from inferwatch.config._scrape_auth import Authorization, BasicAuth, TLSConfig
from inferwatch.config._scrape_config import ScrapeConfig
from inferwatch.config._scrape_job import DnsSDConfig, FileSDConfig, HttpSDConfig, ScrapeJob, StaticGroup
from inferwatch.config._sdk import DEFAULT_BUCKETS, SdkConfig
from inferwatch.config._server import OutcomesConfig, ServerConfig, StorageConfig
from inferwatch.config._slo import (
    DEFAULT_MIN_EVENTS,
    PERIODS,
    TTFT_BUCKETS,
    SloFileEntry,
    SloFileRef,
    SloSpec,
    SloTiers,
    check_thresholds,
)
from inferwatch.config._types import Duration, FrozenModel, Secret
from inferwatch.config.receivers import (
    LANGUAGES,
    PAGERDUTY_KEY_LEN,
    AliyunSmsReceiverSpec,
    AliyunVoiceReceiverSpec,
    DigestReceiverSpec,
    DingTalkReceiverSpec,
    EmailReceiverSpec,
    FeishuReceiverSpec,
    PagerDutyReceiverSpec,
    RateLimitSpec,
    ReceiverSpec,
    SlackReceiverSpec,
    TelegramReceiverSpec,
    TencentSmsReceiverSpec,
    TencentVoiceReceiverSpec,
    TerminalReceiverSpec,
    TwilioReceiverSpec,
    WebhookReceiverSpec,
    WeComAppReceiverSpec,
    WeComReceiverSpec,
)

__all__ = [
    "ALERT_FIELDS",
    "DEFAULT_BUCKETS",
    "DEFAULT_MIN_EVENTS",
    "ENGINE_PACKS",
    "LANGUAGES",
    "MAD_SCALE",
    "PAGERDUTY_KEY_LEN",
    "PERIODS",
    "REDACTED",
    "SCHEDULE_PREFIX",
    "TITLE_FIELDS",
    "TTFT_BUCKETS",
    "AbTestPValueSignal",
    "ActionSpec",
    "AlertingConfig",
    "AlertmanagerSpec",
    "AliyunSmsReceiverSpec",
    "AliyunVoiceReceiverSpec",
    "AnomalousRatioSignal",
    "Authorization",
    "BaselineConfig",
    "BasicAuth",
    "CollectConfig",
    "CommandActionSpec",
    "Config",
    "CpuUtilizationSignal",
    "DegradeActionSpec",
    "DigestReceiverSpec",
    "DingTalkReceiverSpec",
    "DnsSDConfig",
    "Duration",
    "DynamicThreshold",
    "EdgeConfig",
    "EmailReceiverSpec",
    "ErrorRatioSignal",
    "EscalationSpec",
    "EscalationStep",
    "ExprSignal",
    "FeaturePsiSignal",
    "FeishuReceiverSpec",
    "FileSDConfig",
    "FrozenModel",
    "GenerativeSpec",
    "GoldenSpec",
    "GpuMemoryRatioSignal",
    "HAConfig",
    "HeartbeatKind",
    "HeartbeatSenderSpec",
    "HeartbeatWatchSpec",
    "HistoryConfig",
    "HttpActionSpec",
    "HttpLimits",
    "HttpSDConfig",
    "IngestLimits",
    "InhibitRuleSpec",
    "KubernetesScaleSpec",
    "Labelled",
    "LatencyQuantileSignal",
    "LayerSpec",
    "MemberSpec",
    "MessageTemplate",
    "MetricSignal",
    "NotifyPolicy",
    "OnCallConfig",
    "OutcomesConfig",
    "OutlierSpec",
    "OverrideSpec",
    "PagerDutyReceiverSpec",
    "ProbeExpect",
    "ProbeSpec",
    "ProbeTls",
    "QualityConfig",
    "QueryLimits",
    "RateLimitSpec",
    "ReceiverSpec",
    "RemoteWriteQueue",
    "RemoteWriteSpec",
    "RollbackActionSpec",
    "RouteSpec",
    "RuleOverride",
    "RuleSpec",
    "RulesConfig",
    "ScheduleSpec",
    "ScrapeConfig",
    "ScrapeJob",
    "ScrapeTarget",
    "SdkConfig",
    "Secret",
    "ServerConfig",
    "SignalSpec",
    "SlackReceiverSpec",
    "SloFileEntry",
    "SloFileRef",
    "SloSpec",
    "SloTiers",
    "StaticGroup",
    "StorageConfig",
    "TLSConfig",
    "TelegramReceiverSpec",
    "TencentSmsReceiverSpec",
    "TencentVoiceReceiverSpec",
    "TerminalReceiverSpec",
    "TwilioReceiverSpec",
    "UnavailableRatioSignal",
    "UpSignal",
    "WeComAppReceiverSpec",
    "WeComReceiverSpec",
    "WebhookReceiverSpec",
    "check_json_path",
    "check_thresholds",
    "env",
    "install_log_redaction",
    "load_config",
    "mask_secret_fields",
    "parse_config",
    "parse_local_time",
    "prometheus_config_notes",
    "read_prometheus_jobs",
    "redact_text",
    "redact_url",
]
