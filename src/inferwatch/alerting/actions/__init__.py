"""Actions: what an alert does besides notifying (HTTP, command, degrade, rollback, scale), deduplicated."""

from inferwatch.alerting.actions._action_kinds import CommandAction, DegradeAction, HttpAction, RollbackAction
from inferwatch.alerting.actions._actions import Action, ActionRecord, ActionStage, RecordingAction
from inferwatch.alerting.actions._build import build_action, recording_action
from inferwatch.alerting.actions._kube import KubernetesScaleAction
from inferwatch.alerting.actions._ledger import ActionLedger

__all__ = [
    "Action",
    "ActionLedger",
    "ActionRecord",
    "ActionStage",
    "CommandAction",
    "DegradeAction",
    "HttpAction",
    "KubernetesScaleAction",
    "RecordingAction",
    "RollbackAction",
    "build_action",
    "recording_action",
]
