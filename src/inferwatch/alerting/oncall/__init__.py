"""On call: schedules, escalation steps, acknowledgements and their links, the alert history."""

from inferwatch.alerting.oncall._ack_link import ACK_PURPOSE, LINK_ACTIONS, AckLinks, redact_ack_links
from inferwatch.alerting.oncall._acks import Ack, Acks, group_id
from inferwatch.alerting.oncall._call_outcomes import CallOutcomes
from inferwatch.alerting.oncall._calls import MAX_CHECKS, Call, CallOutcome, CallWatch, Outcomes, Phone
from inferwatch.alerting.oncall._episode_ids import EpisodeIds
from inferwatch.alerting.oncall._escalation import Escalator
from inferwatch.alerting.oncall._history import EVENT_KINDS, History
from inferwatch.alerting.oncall._oncall import OnCall, group_state, stands_for
from inferwatch.alerting.oncall._schedule import Shift, oncall_at, shifts
from inferwatch.alerting.oncall._signed_link import LINK_TTL_S, LinkClaims, LinkRefused, LinkSigner

__all__ = [
    "ACK_PURPOSE",
    "EVENT_KINDS",
    "LINK_ACTIONS",
    "LINK_TTL_S",
    "MAX_CHECKS",
    "Ack",
    "AckLinks",
    "Acks",
    "Call",
    "CallOutcome",
    "CallOutcomes",
    "CallWatch",
    "EpisodeIds",
    "Escalator",
    "History",
    "LinkClaims",
    "LinkRefused",
    "LinkSigner",
    "OnCall",
    "Outcomes",
    "Phone",
    "Shift",
    "group_id",
    "group_state",
    "oncall_at",
    "redact_ack_links",
    "shifts",
    "stands_for",
]
