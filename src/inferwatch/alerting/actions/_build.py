"""Actions built from their config specs, and the recorders that stand in for them in replay."""

from __future__ import annotations

from inferwatch.alerting._http import HttpClient
from inferwatch.alerting.actions._action_kinds import CommandAction, DegradeAction, HttpAction, RollbackAction
from inferwatch.alerting.actions._actions import Action, RecordingAction
from inferwatch.alerting.actions._kube import KubernetesScaleAction
from inferwatch.model import parse_matchers
from inferwatch.settings import (
    ActionSpec,
    CommandActionSpec,
    DegradeActionSpec,
    HttpActionSpec,
    KubernetesScaleSpec,
    RollbackActionSpec,
)

__all__ = ["build_action", "recording_action"]


def build_action(spec: ActionSpec, http: HttpClient) -> Action:
    """The action for an action spec."""
    if isinstance(spec, KubernetesScaleSpec):
        return KubernetesScaleAction(spec)
    if isinstance(spec, HttpActionSpec):
        return HttpAction(spec, http)
    if isinstance(spec, CommandActionSpec):
        return CommandAction(spec)
    if isinstance(spec, DegradeActionSpec):
        return DegradeAction(spec, http)
    if isinstance(spec, RollbackActionSpec):
        return RollbackAction(spec, http)
    raise AssertionError(f"unhandled action type {spec!r}")  # pragma: no cover - union is closed


def recording_action(spec: ActionSpec) -> RecordingAction:
    """A recorder standing in for the action (replay); degrade and http restore on resolve."""
    matchers = tuple(m for t in spec.matchers for m in parse_matchers(t))
    restores = isinstance(spec, DegradeActionSpec) or (
        isinstance(spec, HttpActionSpec) and bool(spec.resolve_url))
    return RecordingAction(spec.name, matchers, restores)
