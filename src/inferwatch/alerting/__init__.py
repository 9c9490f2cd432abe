"""The notification pipeline: routing, grouping, inhibition, silences, receivers, actions, digest.

Alertmanager's design in one process: the evaluator ``send``s alerts, the
server (or replay) calls ``tick(now)``; every stage shares one signature.
"""

from inferwatch.alerting._builder import PipelineBuilder, Stages, Stores
from inferwatch.alerting._classify import classify_status
from inferwatch.alerting._delivery import InlineExecutor, QueueStats, ThreadExecutor
from inferwatch.alerting._digest import next_delivery
from inferwatch.alerting._from_config import ALERTING_STATE_FILE, pipeline_from_config
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import AlertGroup, Notification, Notifier, Stage, fingerprint
from inferwatch.alerting._pipeline import Pipeline
from inferwatch.alerting._pipeline_handles import AcksHandle, AlertsHandle, PipelineHandles, SilencesHandle
from inferwatch.alerting._preview import Captured, alerts_from_document, preview
from inferwatch.alerting._records import NotificationRecord
from inferwatch.alerting._replay import ReplayPipeline
from inferwatch.alerting._route import AlertView, Route, RouteOptions
from inferwatch.alerting._runner import PipelineRunner
from inferwatch.alerting._state import StateDB
from inferwatch.alerting.actions import Action, ActionRecord, ActionStage, RecordingAction
from inferwatch.alerting.mute import Silence, Silences
from inferwatch.alerting.notify import (
    RecordingNotifier,
    TerminalNotifier,
    parse_rfc3339,
    rfc3339,
    translate_description,
    translate_summary,
    webhook_payload,
)
from inferwatch.alerting.oncall import (
    EVENT_KINDS,
    LINK_ACTIONS,
    LINK_TTL_S,
    LinkClaims,
    LinkRefused,
    LinkSigner,
    Shift,
    group_id,
    oncall_at,
    redact_ack_links,
    shifts,
)

__all__ = [
    "ALERTING_STATE_FILE",
    "EVENT_KINDS",
    "LINK_ACTIONS",
    "LINK_TTL_S",
    "AcksHandle",
    "Action",
    "ActionRecord",
    "ActionStage",
    "AlertGroup",
    "AlertView",
    "AlertsHandle",
    "Captured",
    "HttpClient",
    "InlineExecutor",
    "LinkClaims",
    "LinkRefused",
    "LinkSigner",
    "Notification",
    "NotificationRecord",
    "Notifier",
    "Pipeline",
    "PipelineBuilder",
    "PipelineHandles",
    "PipelineRunner",
    "QueueStats",
    "RecordingAction",
    "RecordingNotifier",
    "ReplayPipeline",
    "Route",
    "RouteOptions",
    "Shift",
    "Silence",
    "Silences",
    "SilencesHandle",
    "Stage",
    "Stages",
    "StateDB",
    "Stores",
    "TerminalNotifier",
    "ThreadExecutor",
    "alerts_from_document",
    "classify_status",
    "fingerprint",
    "group_id",
    "next_delivery",
    "oncall_at",
    "parse_rfc3339",
    "pipeline_from_config",
    "preview",
    "redact_ack_links",
    "rfc3339",
    "shifts",
    "translate_description",
    "translate_summary",
    "webhook_payload",
]
