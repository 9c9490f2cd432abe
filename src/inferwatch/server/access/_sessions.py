"""Dashboard sign-ins: a random session id in an HttpOnly cookie, and its CSRF token.

A session lives in this process only (a restart signs everyone out) and ends at its expiry
(``server.auth.session_ttl``) or at sign-out. Each has a CSRF token that the page reads from
a second cookie (not HttpOnly) and sends back in ``X-CSRF-Token`` on every write: a page on
another origin can make the browser send the cookies but cannot read them, so it cannot send
the header (double-submit). The role is looked up again on every request, so a reload that
removes a user or changes a role applies to its open sessions at once.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from dataclasses import dataclass

from inferwatch.model import Clock

__all__ = ["CSRF_COOKIE", "CSRF_HEADER", "SESSION_COOKIE", "Session", "Sessions"]

SESSION_COOKIE = "inferwatch_session"
CSRF_COOKIE = "inferwatch_csrf"
CSRF_HEADER = "x-csrf-token"
_MAX_SESSIONS = 10_000


@dataclass(frozen=True)
class Session:
    """One sign-in: who (name and how: ``basic`` or ``token``), until when, and its CSRF token."""

    name: str
    via: str
    expires: float
    csrf: str

    def csrf_ok(self, presented: str) -> bool:
        """Whether ``presented`` is this session's CSRF token (constant time)."""
        return hmac.compare_digest(presented.encode(), self.csrf.encode())


class Sessions:
    """The open sessions, by id; expired ones dropped as they are met."""

    def __init__(self, clock: Clock, ttl: float) -> None:
        self._clock, self.ttl = clock, ttl
        self._open: dict[str, Session] = {}
        self._lock = threading.Lock()

    def open(self, name: str, via: str) -> tuple[str, Session]:
        """A new session for ``name``: its id (the cookie's value) and the session."""
        now = self._clock.now()
        sid = secrets.token_urlsafe(32)
        session = Session(name, via, now + self.ttl, secrets.token_urlsafe(24))
        with self._lock:
            if len(self._open) >= _MAX_SESSIONS:
                self._open = {k: s for k, s in self._open.items() if s.expires > now}
                while len(self._open) >= _MAX_SESSIONS:  # still full: the oldest goes
                    self._open.pop(next(iter(self._open)))
            self._open[sid] = session
        return sid, session

    def get(self, sid: str) -> Session | None:
        """The open session with id ``sid`` (``None``: unknown or expired)."""
        with self._lock:
            session = self._open.get(sid)
            if session is not None and session.expires <= self._clock.now():
                del self._open[sid]
                return None
        return session

    def close(self, sid: str) -> None:
        """Sign out."""
        with self._lock:
            self._open.pop(sid, None)
