"""The dashboard's sign-in: ``GET /login`` (a form), ``POST /login``, ``POST /logout``; and the audit.

A sign-in takes a web config user's name and password, or a token; it sets the session cookie
(HttpOnly, SameSite=Strict, Secure over TLS, expiring with the session) and the CSRF cookie the
page sends back in ``X-CSRF-Token``. A sign-in form posted from another origin is refused, so
another site cannot sign a browser in as someone else.
"""

from __future__ import annotations

import html
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from inferwatch.server.access._access import Access
from inferwatch.server.access._gate import cookie, same_origin
from inferwatch.server.access._identity import Principal
from inferwatch.server.access._policy import LOGIN_PATH, LOGOUT_PATH
from inferwatch.server.access._sessions import CSRF_COOKIE, SESSION_COOKIE

__all__ = ["access_routes"]

_STYLE = ("body{font-family:system-ui,sans-serif;max-width:24rem;margin:4rem auto}"
          "label{display:block;margin:.6rem 0}input{width:100%}p.err{color:#b00}")
_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                                       "frame-ancestors 'none'", "X-Frame-Options": "DENY",
            "Cache-Control": "no-store"}


def _next(raw: str) -> str:
    """Where to go after signing in: a path on this server only (never ``//host`` or a URL)."""
    return raw if raw.startswith("/") and not raw.startswith("//") and "\\" not in raw else "/"


def _page(next_path: str, error: str = "", status: int = 200) -> HTMLResponse:
    err = f'<p class="err" id="error">{html.escape(error)}</p>' if error else ""
    body = (f"<!doctype html><html><head><meta charset=utf-8><title>inferwatch: sign in</title>"
            f"<style>{_STYLE}</style></head><body><h1>inferwatch</h1>{err}"
            f'<form method="post" action="{LOGIN_PATH}"><input type="hidden" name="next" '
            f'value="{html.escape(next_path)}">'
            '<label>User <input name="user" id="user" autocomplete="username"></label>'
            '<label>Password <input name="password" id="password" type="password" '
            'autocomplete="current-password"></label>'
            '<p>or</p><label>API token <input name="token" id="token" type="password" autocomplete="off">'
            '</label><button type="submit" id="sign-in">Sign in</button></form></body></html>')
    return HTMLResponse(body, status_code=status, headers=_HEADERS)


def access_routes(access: Access) -> list[Route]:
    """The sign-in, sign-out and audit routes of ``access``."""

    async def login_page(request: Request) -> Response:
        return _page(_next(request.query_params.get("next", "/")))

    async def login(request: Request) -> Response:
        form = {k: v[0] for k, v in parse_qs((await request.body()).decode("utf-8", "replace")).items()}
        next_path = _next(form.get("next", "/"))
        if not same_origin({k.lower(): v for k, v in request.headers.items()}):
            return _page(next_path, "sign-in refused: the form came from another site", 403)
        creds = access.credentials
        found: Principal | None = None
        if form.get("token"):
            found = creds.by_token(form["token"].strip())
        elif form.get("user"):
            found = await run_in_threadpool(creds.by_password, form["user"], form.get("password", ""))
        if found is None:
            return _page(next_path, "wrong user name and password, or wrong token", 401)
        sid, session = access.sessions.open(found.name, found.via)
        secure = request.url.scheme == "https"
        resp = RedirectResponse(next_path, status_code=303, headers={"Cache-Control": "no-store"})
        ttl = int(access.sessions.ttl)
        resp.set_cookie(SESSION_COOKIE, sid, max_age=ttl, httponly=True, samesite="strict", secure=secure)
        resp.set_cookie(CSRF_COOKIE, session.csrf, max_age=ttl, httponly=False, samesite="strict",
                        secure=secure)
        return resp

    async def logout(request: Request) -> Response:
        sid = cookie({"cookie": request.headers.get("cookie", "")}, SESSION_COOKIE)
        if sid:
            access.sessions.close(sid)
        resp = RedirectResponse(LOGIN_PATH, status_code=303)
        resp.delete_cookie(SESSION_COOKIE, samesite="strict")
        resp.delete_cookie(CSRF_COOKIE, samesite="strict")
        return resp

    async def audit(request: Request) -> Response:
        return JSONResponse({"status": "success", "data": [e.to_json() for e in reversed(access.audit)]})

    return [Route(LOGIN_PATH, login_page, methods=["GET"]), Route(LOGIN_PATH, login, methods=["POST"]),
            Route(LOGOUT_PATH, logout, methods=["POST"]), Route("/api/v1/audit", audit, methods=["GET"])]
