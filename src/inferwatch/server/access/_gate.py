"""The access gate: the one place that decides whether a request may go on.

For each request it finds who is asking (a bearer token, basic auth of a web config user, or
the dashboard's session cookie), the role the request needs (``_policy.needed``) and answers

* 401 when credentials are missing or wrong: the message says what to send, never echoes it;
  a browser opening a page is sent to the sign-in page instead;
* 403 when the caller's role is not enough (naming the caller, its role and the role needed),
  or when a write signed in by cookie lacks its CSRF token or comes from another origin;

and otherwise passes it on with the caller in ``scope["inferwatch.principal"]``. Every write a
caller makes is kept in the audit with its name (``GET /api/v1/audit``, admin).
"""

from __future__ import annotations

import hmac
import json
from typing import Any
from urllib.parse import quote, urlsplit

from starlette.concurrency import run_in_threadpool

from inferwatch.server.access._access import Access
from inferwatch.server.access._identity import Principal, parse_basic
from inferwatch.server.access._policy import LOGIN_PATH, grants, is_read, needed
from inferwatch.server.access._sessions import CSRF_HEADER, SESSION_COOKIE

__all__ = ["GATED", "PRINCIPAL", "AccessGate", "cookie", "same_origin"]

GATED = "inferwatch.gated"
"""Set in the scope of every request the gate let through (routes trust its decision)."""
PRINCIPAL = "inferwatch.principal"
"""The caller (``Principal``) or ``None`` (an anonymous read, a public path)."""
_AM_V2 = "/api/v2/"
_HOW = ("send 'Authorization: Bearer <token>' (server.api_token or a token of server.auth.tokens), "
        "basic auth of a user of the web config file, or sign in at /login")


def _headers(scope: Any) -> dict[str, str]:
    return {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", ())}


def cookie(headers: dict[str, str], name: str) -> str:
    """The value of cookie ``name`` in the request's ``Cookie`` header ("" when absent)."""
    for part in headers.get("cookie", "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return ""


def same_origin(headers: dict[str, str]) -> bool:
    """Whether the request's ``Origin`` (or, lacking it, ``Referer``) is this server (absent: yes)."""
    origin = headers.get("origin") or headers.get("referer") or ""
    if not origin:
        return True
    return urlsplit(origin).netloc == headers.get("host", "")


async def _answer(send: Any, status: int, message: str, path: str,
                  extra: list[tuple[bytes, bytes]] | None = None) -> None:
    kind = "unauthorized" if status == 401 else "forbidden"
    # in the route's shape: Alertmanager's API v2 answers errors as a JSON string (amtool prints it)
    shaped: Any = message if path.startswith(_AM_V2) else {
        "status": "error", "errorType": kind, "error": message}
    body = json.dumps(shaped).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


class AccessGate:
    """ASGI middleware: authentication and authorisation of every request, by ``access``."""

    def __init__(self, app: Any, access: Access) -> None:
        self.app, self.access = app, access

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, path, headers = scope["method"], scope["path"], _headers(scope)
        want = None if path in self.access.open_paths else needed(method, path)
        principal, session_csrf, problem = await self._identify(headers)
        if want is None:  # public: a wrong header here is a device token or the link's own business
            scope[GATED], scope[PRINCIPAL] = True, principal
            await self.app(scope, receive, send)
            return
        if problem is not None:
            await self._unauthorized(send, headers, problem, path)
            return
        if principal is None:
            if want == "viewer" and self.access.reads_open(path):
                scope[GATED], scope[PRINCIPAL] = True, None
                await self.app(scope, receive, send)
                return
            if method == "GET" and "text/html" in headers.get("accept", ""):
                await _redirect(send, f"{LOGIN_PATH}?next={quote(path)}")
                return
            await self._unauthorized(send, headers, f"{method} {path} needs the {want} role: {_HOW}", path)
            return
        if not grants(principal.role, want):
            await _answer(send, 403, f"{principal.describe()} may not {method} {path}: that needs the {want} "
                                     "role (server.auth.tokens / server.auth.users set roles)", path)
            return
        if session_csrf is not None and not is_read(method, path):
            refused = _csrf_refusal(headers, session_csrf)
            if refused:
                await _answer(send, 403, refused, path)
                return
        scope[GATED], scope[PRINCIPAL] = True, principal
        await self._run_audited(scope, receive, send, principal, is_read(method, path))

    async def _run_audited(self, scope: Any, receive: Any, send: Any, principal: Principal,
                           read: bool) -> None:
        if read:
            await self.app(scope, receive, send)
            return
        status = 500

        async def tap(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)
        try:
            await self.app(scope, receive, tap)
        finally:
            self.access.record(principal, scope["method"], scope["path"], status)

    async def _identify(self, headers: dict[str, str]) -> tuple[Principal | None, str | None, str | None]:
        """``(principal, its session's CSRF token, problem)``: who is asking, or why that failed."""
        creds = self.access.credentials
        auth = headers.get("authorization", "")
        if auth:
            scheme = auth.partition(" ")[0].lower()
            if scheme == "bearer":
                found = creds.by_token(auth.partition(" ")[2].strip())
                return found, None, None if found else (
                    "the bearer token is not one the server accepts: send 'Authorization: Bearer <token>' "
                    "with server.api_token or a token of server.auth.tokens")
            basic = parse_basic(auth)
            if basic is None:
                return None, None, "the Authorization header is neither 'Bearer <token>' nor valid basic auth"
            user, password = basic
            found = creds.by_password(user, password) if creds.cached(user, password) else \
                await run_in_threadpool(creds.by_password, user, password)
            return found, None, None if found else f"basic auth refused for user {user[:64]!r}"
        sid = cookie(headers, SESSION_COOKIE)
        session = self.access.sessions.get(sid) if sid else None
        if session is None:
            return None, None, None
        role = creds.role_of(session.name, session.via)
        if role is None:
            return None, None, None  # the user or token is gone since the sign-in
        return Principal(session.name, role, "session"), session.csrf, None

    async def _unauthorized(self, send: Any, headers: dict[str, str], message: str, path: str) -> None:
        challenges = [(b"www-authenticate", b'Bearer realm="inferwatch"')]
        # Basic is offered to programs (a browser's fetch would pop up a password dialog)
        if self.access.credentials.has_users and headers.get("sec-fetch-mode", "navigate") == "navigate":
            challenges.append((b"www-authenticate", b'Basic realm="inferwatch"'))
        await _answer(send, 401, message, path, challenges)


def _csrf_refusal(headers: dict[str, str], csrf: str) -> str | None:
    if not same_origin(headers):
        return "a write signed in by cookie must come from this server's own pages (Origin differs)"
    presented = headers.get(CSRF_HEADER, "")
    if not presented:
        return ("a write signed in by cookie needs the X-CSRF-Token header "
                "(the inferwatch_csrf cookie's value)")
    ok = hmac.compare_digest(presented.encode(), csrf.encode())
    return None if ok else "the X-CSRF-Token header is wrong"


async def _redirect(send: Any, location: str) -> None:
    await send({"type": "http.response.start", "status": 303, "headers": [
        (b"location", location.encode()), (b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})
