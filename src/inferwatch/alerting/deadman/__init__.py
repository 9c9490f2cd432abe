"""The dead man's switch, both ways: the Watchdog sent out, and heartbeats watched in."""

from inferwatch.alerting.deadman._sender import HeartbeatSender, resolve_target
from inferwatch.alerting.deadman._watch import HEARTBEAT_MISSING, HeartbeatState, HeartbeatWatch
from inferwatch.alerting.deadman._watchdog import (
    PAGERDUTY_EVENTS_URL,
    WATCHDOG,
    HeartbeatRequest,
    HeartbeatTarget,
    watchdog_alert,
    watchdog_request,
)

__all__ = [
    "HEARTBEAT_MISSING", "PAGERDUTY_EVENTS_URL", "WATCHDOG", "HeartbeatRequest", "HeartbeatSender",
    "HeartbeatState", "HeartbeatTarget", "HeartbeatWatch", "resolve_target", "watchdog_alert",
    "watchdog_request",
]
