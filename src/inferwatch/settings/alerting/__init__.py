"""The ``alerting`` section: routes, inhibitions, notify policy, actions, Alertmanagers, heartbeats, on-call.

Receivers are the room beside this one (``config.receivers``).
"""

from inferwatch.settings.alerting._actions import (
    ActionSpec,
    CommandActionSpec,
    DegradeActionSpec,
    HttpActionSpec,
    KubernetesScaleSpec,
    RollbackActionSpec,
)
from inferwatch.settings.alerting._alerting import (
    BaseAlertingConfig,
    InhibitRuleSpec,
    NotifyPolicy,
    RouteSpec,
)
from inferwatch.settings.alerting._alertmanager_receivers import ReceiverCheck
from inferwatch.settings.alerting._alertmanager_yml import alertmanager_file_notes, read_alertmanager_file
from inferwatch.settings.alerting._alertmanagers import AlertmanagerSpec
from inferwatch.settings.alerting._heartbeat import (
    HeartbeatKind,
    HeartbeatSenderSpec,
    HeartbeatWatchSpec,
    check_heartbeats,
)
from inferwatch.settings.alerting._oncall import (
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
from inferwatch.settings.alerting._time_intervals import (
    MONTHS,
    WEEKDAYS,
    TimeIntervalSpec,
    TimeRange,
    TimeSpec,
    parse_range,
)

__all__ = [
    "MONTHS",
    "SCHEDULE_PREFIX",
    "WEEKDAYS",
    "ActionSpec",
    "AlertmanagerSpec",
    "BaseAlertingConfig",
    "CommandActionSpec",
    "DegradeActionSpec",
    "EscalationSpec",
    "EscalationStep",
    "HeartbeatKind",
    "HeartbeatSenderSpec",
    "HeartbeatWatchSpec",
    "HistoryConfig",
    "HttpActionSpec",
    "InhibitRuleSpec",
    "KubernetesScaleSpec",
    "LayerSpec",
    "MemberSpec",
    "NotifyPolicy",
    "OnCallConfig",
    "OverrideSpec",
    "ReceiverCheck",
    "RollbackActionSpec",
    "RouteSpec",
    "ScheduleSpec",
    "TimeIntervalSpec",
    "TimeRange",
    "TimeSpec",
    "alertmanager_file_notes",
    "check_heartbeats",
    "parse_local_time",
    "parse_range",
    "read_alertmanager_file",
]
