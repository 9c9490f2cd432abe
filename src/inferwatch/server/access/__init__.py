"""Who may do what: the access gate in front of every route, its one table of roles, credentials
(named tokens, the web configuration file's users), dashboard sessions with CSRF, TLS."""

from inferwatch.server.access._access import Access, AuditEntry, loopback_listen
from inferwatch.server.access._gate import GATED, PRINCIPAL, AccessGate, same_origin
from inferwatch.server.access._identity import ADMIN_TOKEN_NAME, Credentials, Principal, credentials_from
from inferwatch.server.access._login import access_routes
from inferwatch.server.access._policy import ACK_LINK_PATH, grants, is_read, needed
from inferwatch.server.access._sessions import CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE, Sessions

__all__ = ["ACK_LINK_PATH", "ADMIN_TOKEN_NAME", "CSRF_COOKIE", "CSRF_HEADER", "GATED", "PRINCIPAL",
           "SESSION_COOKIE", "Access", "AccessGate", "AuditEntry", "Credentials", "Principal", "Sessions",
           "access_routes", "credentials_from", "grants", "is_read", "loopback_listen", "needed",
           "same_origin"]
