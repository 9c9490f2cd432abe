"""Which role each request needs: the one table of the server's access rules.

A read (``GET``, ``HEAD``, and Prometheus's ``POST`` forms of its query endpoints) needs
``viewer`` (or nothing, where reads are anonymous); silences and acknowledgements need
``responder``; what machines send (samples, spans, alerts, outcomes) needs ``ingest``; any
other write, ``/-/reload`` among them, needs ``admin``. A few paths are open to anyone:
health, readiness, the sign-in page, the dashboard's static files (no data in them), edge
ingest (its device tokens are checked by its handler) and the signed acknowledgement link
(the signature is the credential, for one episode).

>>> needed("GET", "/api/v1/query"), needed("POST", "/api/v1/query"), needed("DELETE", "/api/v2/silence/x")
('viewer', 'viewer', 'responder')
>>> needed("POST", "/-/reload"), needed("POST", "/api/v1/write"), needed("GET", "/-/healthy")
('admin', 'ingest', None)
"""

from __future__ import annotations

from inferwatch.config import Role

__all__ = ["ACK_LINK_PATH", "LOGIN_PATH", "LOGOUT_PATH", "grants", "is_read", "needed"]

ACK_LINK_PATH = "/api/v1/alerts/ack/link"
LOGIN_PATH = "/login"
LOGOUT_PATH = "/logout"
_EDGE_INGEST = "/api/v1/edge/ingest"  # edge's INGEST_PATH: device tokens, checked by its handler
_EDGE_CONFIG = "/api/v1/edge/config"  # an agent's configuration: device tokens, checked by its handler too
_VOICE_CALLBACK = "/api/v1/alerts/voice/tencent"  # Tencent's call status: only a waiting call's id and number
_PUBLIC = frozenset({"/-/healthy", "/-/ready", LOGIN_PATH, LOGOUT_PATH, ACK_LINK_PATH, _EDGE_INGEST,
                     _EDGE_CONFIG, _VOICE_CALLBACK})
_PUBLIC_PREFIXES = ("/dashboard/",)  # the page's scripts and styles: code, no data
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_ADMIN_READS = frozenset({"/api/v1/audit"})  # who did what: never an anonymous or a viewer's read
# Prometheus's API takes POST forms of its reads (long queries in the body).
_POST_READS = frozenset({
    "/api/v1/query", "/api/v1/query_range", "/api/v1/format_query", "/api/v1/query_exemplars",
    "/api/v1/series", "/api/v1/labels", "/api/v1/metadata", "/api/v1/targets/metadata", "/federate",
    "/api/v1/status/buildinfo", "/api/v1/status/config", "/api/v1/status/flags",
    "/api/v1/status/runtimeinfo", "/api/v1/status/tsdb", "/api/v1/targets", "/api/v1/rules", "/api/v1/alerts",
})
_RESPONDER = frozenset({"/api/v2/silences", "/api/v1/alerts/ack", "/api/v1/alerts/unack"})
_RESPONDER_PREFIXES = ("/api/v2/silence/",)
_INGEST = frozenset({"/api/v1/write", "/api/v1/otlp/v1/metrics", "/v1/metrics", "/v1/traces",
                     "/api/v2/alerts", "/api/v1/alertmanager", "/api/v1/outcomes"})
_INGEST_PREFIXES = ("/api/v1/heartbeats/",)  # an outside service's Watchdog pings
# What each role may do besides its own (admin: everything).
_GRANTS: dict[Role, frozenset[Role]] = {
    "viewer": frozenset({"viewer"}), "responder": frozenset({"viewer", "responder"}),
    "ingest": frozenset({"ingest"}), "admin": frozenset({"viewer", "responder", "ingest", "admin"}),
}


def is_read(method: str, path: str) -> bool:
    """Whether the request only reads."""
    return method in _READ_METHODS or (method == "POST" and path in _POST_READS)


def needed(method: str, path: str) -> Role | None:
    """The role a request needs (``None``: anyone may)."""
    if path in _PUBLIC or path.startswith(_PUBLIC_PREFIXES):
        return None
    if path in _ADMIN_READS:
        return "admin"
    if is_read(method, path):
        return "viewer"
    if path in _RESPONDER or path.startswith(_RESPONDER_PREFIXES):
        return "responder"
    if path in _INGEST or path.startswith(_INGEST_PREFIXES):
        return "ingest"
    return "admin"  # every other write, known or not: the safe default


def grants(role: Role, want: Role) -> bool:
    """Whether ``role`` may do what ``want`` may.

    >>> grants("responder", "viewer"), grants("ingest", "viewer"), grants("admin", "ingest")
    (True, False, True)
    """
    return want in _GRANTS[role]
