"""The server's access settings, credentials and sessions, as one object a reload replaces parts of.

``Access.of(config, admin, clock)`` reads ``server.auth`` and the web configuration file; the
gate (``_gate``) asks it who a request is; ``prepare(config)`` builds everything a reload
would change (raising ``ConfigError`` before anything changes) and returns what applies it.
"""

from __future__ import annotations

import ssl
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inferwatch.config import Config, Secret, WebConfig, load_web_config
from inferwatch.model import Clock
from inferwatch.server._hosts import is_loopback
from inferwatch.server.access._identity import Credentials, Principal, credentials_from
from inferwatch.server.access._sessions import Sessions
from inferwatch.server.access._tls import configure_tls, server_tls

__all__ = ["Access", "AuditEntry", "loopback_listen"]

_AUDIT_KEPT = 1000


def loopback_listen(listen: str) -> bool:
    """Whether ``host:port`` listens on loopback only (reads are open there by default).

    >>> loopback_listen("127.0.0.1:9464"), loopback_listen("0.0.0.0:9464"), loopback_listen("localhost:1")
    (True, False, True)
    """
    return is_loopback(listen.rpartition(":")[0])


@dataclass(frozen=True)
class AuditEntry:
    """One write: when, who, what, and the answer's status."""

    time: float
    who: str
    method: str
    path: str
    status: int

    def to_json(self) -> dict[str, Any]:
        """The entry as ``GET /api/v1/audit`` lists it."""
        return {"time": self.time, "who": self.who, "method": self.method, "path": self.path,
                "status": self.status}


@dataclass(frozen=True)
class _Settings:
    anonymous_reads: bool
    anonymous_metrics: bool
    web_path: str | None


def _settings(config: Config, listen: str | None) -> _Settings:
    auth = config.server.auth
    reads = auth.anonymous_reads if auth.anonymous_reads is not None else loopback_listen(
        listen or config.server.listen)
    metrics = auth.anonymous_metrics if auth.anonymous_metrics is not None else reads
    return _Settings(reads, metrics, auth.web_config_file)


def _web(path: str | None) -> WebConfig | None:
    return load_web_config(path) if path else None


class Access:
    """Who may do what now: the settings, the credentials, the sessions, the TLS context."""

    def __init__(self, settings: _Settings, credentials: Credentials, clock: Clock, ttl: float,
                 tls: ssl.SSLContext | None, web: WebConfig | None) -> None:
        self.settings, self.credentials, self.clock = settings, credentials, clock
        self.sessions = Sessions(clock, ttl)
        self.tls = tls
        """The server's TLS context (``None``: plain HTTP); reloads load new files into it."""
        self._web = web
        self._admin: Secret | None = None
        self.listen: str | None = None
        """The address ``serve`` listens on when not the config's (``--listen``): reads' default."""
        self.open_paths: frozenset[str] = frozenset()
        """Writes that need no credentials here (the demo's ``/v1/traces``: its services send none)."""
        self.audit: deque[AuditEntry] = deque(maxlen=_AUDIT_KEPT)
        self._lock = threading.Lock()

    @classmethod
    def of(cls, config: Config, admin: Secret, clock: Clock, *, listen: str | None = None,
           open_paths: frozenset[str] = frozenset()) -> Access:
        """The access of ``config`` (``ConfigError`` naming the file and key that is wrong)."""
        settings = _settings(config, listen)
        web = _web(settings.web_path)
        creds = credentials_from(config.server.auth, web, admin)
        tls = None
        if web is not None and web.tls_server_config is not None:
            tls = server_tls(web.tls_server_config, str(settings.web_path))
        access = cls(settings, creds, clock, config.server.auth.session_ttl, tls, web)
        access._admin, access.listen, access.open_paths = admin, listen, open_paths
        return access

    def relisten(self, listen: str, config: Config) -> None:
        """``serve --listen``: reads' default follows the address really listened on."""
        self.listen = listen
        self.settings = _settings(config, listen)

    def reads_open(self, path: str) -> bool:
        """Whether a read of ``path`` needs no credentials."""
        return self.settings.anonymous_metrics if path == "/metrics" else self.settings.anonymous_reads

    def record(self, principal: Principal, method: str, path: str, status: int) -> None:
        """Keep one write in the audit (the newest 1,000)."""
        self.audit.append(AuditEntry(self.clock.now(), principal.describe(), method, path, status))

    def prepare(self, config: Config) -> Callable[[], str]:
        """Everything a reload changes, built and checked now; the returned call applies it."""
        assert self._admin is not None
        settings = _settings(config, self.listen)
        web = _web(settings.web_path)
        creds = credentials_from(config.server.auth, web, self._admin)
        new_tls = web.tls_server_config if web is not None else None
        old_tls = self._web.tls_server_config if self._web is not None else None
        if new_tls is not None and self.tls is not None:
            server_tls(new_tls, str(settings.web_path))  # fails here, before the live context is touched
        notes = []
        if (new_tls is None) != (old_tls is None):
            notes.append("turning TLS on or off takes effect after a restart")

        def apply() -> str:
            with self._lock:
                self.settings, self.credentials, self._web = settings, creds, web
                self.sessions.ttl = config.server.auth.session_ttl
                if new_tls is not None and self.tls is not None:
                    configure_tls(self.tls, new_tls, str(settings.web_path))
            users = len(web.basic_auth_users) if web else 0
            return "; ".join([f"auth applied ({len(config.server.auth.tokens)} named tokens, {users} users, "
                              f"reads {'open' if settings.anonymous_reads else 'need credentials'}"
                              f"{', TLS certificates reloaded' if new_tls is not None and self.tls else ''})",
                              *notes])
        return apply

