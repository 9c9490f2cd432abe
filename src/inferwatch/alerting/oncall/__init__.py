"""On call: schedules, escalation steps, acknowledgements and their links, the alert history."""

from inferwatch.alerting.oncall._ack_link import AckLinks
from inferwatch.alerting.oncall._acks import Ack, Acks, group_id
from inferwatch.alerting.oncall._escalation import Escalator
from inferwatch.alerting.oncall._history import EVENT_KINDS, History
from inferwatch.alerting.oncall._oncall import OnCall, group_state, stands_for
from inferwatch.alerting.oncall._schedule import Shift, oncall_at, shifts

__all__ = [
    "EVENT_KINDS",
    "Ack",
    "AckLinks",
    "Acks",
    "Escalator",
    "History",
    "OnCall",
    "Shift",
    "group_id",
    "group_state",
    "oncall_at",
    "shifts",
    "stands_for",
]
