"""The dashboard behind a sign-in, in Chromium against a real ``inferwatch serve``: a page on
another origin cannot silence or acknowledge with the signed-in browser's cookie (CSRF), and the
dashboard itself signs in and silences with it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import bcrypt
import httpx
import pytest
from tests.server._proc import serve

from dashboard.conftest import Watched

pytestmark = [pytest.mark.slow, pytest.mark.tools]
ADMIN = "admin-t0ken-for-sign-in"
PASSWORD = "alice's password here"
TIMEOUT_MS = 60_000  # the signed-in overview's first queries on a loaded runner


def _attacker_page(target: str) -> bytes:
    """What another site would serve: a script posting a silence and an ack with the browser's cookies."""
    silence = {"matchers": [{"name": "alertname", "value": "X", "isRegex": False}],
               "startsAt": "2020-01-01T00:00:00Z", "endsAt": "2099-01-01T00:00:00Z",
               "createdBy": "mallory", "comment": "csrf"}
    return f"""<!doctype html><body><script>
    const post = (path, body) => fetch("{target}" + path, {{
      method: "POST", credentials: "include", mode: "no-cors", headers: {{"Content-Type": "text/plain"}},
      body: JSON.stringify(body)}}).catch(() => null);
    Promise.all([post("/api/v2/silences", {json.dumps(silence)}),
                 post("/api/v1/alerts/ack", {{"matchers": ["alertname=X"], "by": "mallory"}})])
      .then(() => {{ document.body.dataset.done = "1"; }});
    </script></body>""".encode()


@pytest.fixture
def attacker() -> Iterator[tuple[str, list[bytes]]]:
    page: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page[0])

        def log_message(self, *args: Any) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", page
    finally:
        srv.shutdown()
        srv.server_close()


def test_sign_in_then_a_foreign_page_cannot_write_and_the_dashboard_can(
        tmp_path: Path, browser: Any, attacker: tuple[str, list[bytes]]) -> None:
    digest = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()
    (tmp_path / "web.yml").write_text(f"basic_auth_users: {{alice: '{digest}'}}\n")
    config = (f"server: {{data_dir: '{tmp_path / 'data'}', api_token: {ADMIN}, "
              "auth: {web_config_file: web.yml, anonymous_reads: false, users: {alice: responder}}}\n")
    admin = {"Authorization": f"Bearer {ADMIN}"}
    with serve(config, tmp_path) as s, httpx.Client(base_url=s.url, headers=admin, timeout=60) as api:
        ctx = browser.new_context()
        try:
            page = Watched(ctx.new_page())
            p = page.page
            p.goto(f"{s.url}/")  # reads need credentials: the page sends the browser to sign in
            p.wait_for_selector("#sign-in", timeout=TIMEOUT_MS)
            assert "/login?next=" in p.url
            p.fill("#user", "alice")
            p.fill("#password", PASSWORD)
            p.click("#sign-in")
            p.wait_for_selector("body[data-ready]", timeout=TIMEOUT_MS)

            # another origin's page, in the same signed-in browser: its writes are refused (403)
            url, served = attacker
            served.append(_attacker_page(s.url))
            evil = ctx.new_page()
            answers: list[tuple[str, int]] = []  # what the server said (opaque to the page, seen here)
            evil.on("response", lambda r: answers.append((urlsplit(r.url).path, r.status))
                    if r.url.startswith(s.url) else None)
            evil.goto(url)
            evil.wait_for_selector("body[data-done='1']", state="attached", timeout=TIMEOUT_MS)
            # 403, not 401: the cookie went along (same site), and the gate refused the write anyway
            assert sorted(answers) == [("/api/v1/alerts/ack", 403), ("/api/v2/silences", 403)]
            assert api.get("/api/v2/silences").json() == []
            assert not any(e["path"] in ("/api/v2/silences", "/api/v1/alerts/ack")
                           for e in api.get("/api/v1/audit").json()["data"])

            # the dashboard's own form: the session cookie with its CSRF token
            p.goto(f"{s.url}/#/silences")
            p.wait_for_selector("body[data-ready='silences']", timeout=TIMEOUT_MS)
            p.wait_for_selector("#sign-out", timeout=TIMEOUT_MS)
            p.fill("#matchers", 'alertname="Planned"')
            p.fill("#author", "alice")
            p.fill("#comment", "planned work")
            p.click("#create")
            p.wait_for_selector("#form-message .msg", timeout=TIMEOUT_MS)
            assert "created silence" in p.inner_text("#form-message"), p.inner_text("#form-message")
            (made,) = api.get("/api/v2/silences").json()
            assert made["createdBy"] == "alice"
            audit = api.get("/api/v1/audit").json()["data"]
            assert [(e["who"], e["path"], e["status"]) for e in audit] == [
                ("user 'alice' (responder)", "/api/v2/silences", 200)]
            assert page.take() == []
        finally:
            ctx.close()
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)
