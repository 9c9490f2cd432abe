"""The access gate: who may do what (roles), what a refusal says, sessions with CSRF, the web config.

One small app behind the real gate, its routes answering "ok"; the gate's decisions are what is
tested here (the wiring into ``serve`` is ``test_serve_web_config.py``).
"""

from __future__ import annotations

import base64
import socket
import ssl
import subprocess
import threading
from pathlib import Path
from typing import Any

import bcrypt
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient
from tests._require import require_tool

from inferwatch._exceptions import ConfigError
from inferwatch.config import Config, Secret, load_web_config, parse_web_config
from inferwatch.model import SimulatedClock
from inferwatch.server.access import PRINCIPAL, Access, AccessGate, access_routes, needed

ADMIN = "admin-token-0123456789"
VIEW = "viewer-token-0123456789"
RESP = "responder-token-0123456789"
INGEST = "ingest-token-0123456789"
PASSWORD = "correct horse battery"
HASH = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()  # cost 4: fast tests


@pytest.mark.parametrize(("method", "path", "role"), [
    ("GET", "/api/v1/query", "viewer"),
    ("POST", "/api/v1/query_range", "viewer"),  # Prometheus's POST form of a read
    ("GET", "/", "viewer"),
    ("GET", "/metrics", "viewer"),
    ("POST", "/api/v2/silences", "responder"),
    ("DELETE", "/api/v2/silence/abc", "responder"),
    ("POST", "/api/v1/alerts/ack", "responder"),
    ("POST", "/api/v1/write", "ingest"),
    ("POST", "/api/v2/alerts", "ingest"),
    ("POST", "/api/v1/outcomes", "ingest"),
    ("POST", "/api/v1/heartbeats/outside", "ingest"),
    ("POST", "/-/reload", "admin"),
    ("POST", "/api/v1/some-new-write", "admin"),  # rule: an unknown write needs the most
    ("GET", "/api/v1/audit", "admin"),  # never anonymous, even where reads are
    ("GET", "/-/healthy", None),
    ("POST", "/api/v1/alerts/ack/link", None),  # the signed link is its own credential
    ("POST", "/api/v1/edge/ingest", None),  # device tokens, checked by edge ingest itself
    ("GET", "/dashboard/v123/js/app.js", None),
])
def test_each_request_needs_one_role(method: str, path: str, role: str | None) -> None:
    assert needed(method, path) == role


def _auth(tmp_path: Path, **auth: Any) -> Config:
    (tmp_path / "web.yml").write_text(f"basic_auth_users: {{alice: '{HASH}', bob: '{HASH}'}}\n")
    tokens = [{"name": "grafana", "role": "viewer", "token": VIEW},
              {"name": "oncall", "role": "responder", "token": RESP},
              {"name": "prom", "role": "ingest", "token": INGEST}]
    return Config.model_validate({"server": {"listen": "0.0.0.0:9464", "auth": {
        "web_config_file": str(tmp_path / "web.yml"), "tokens": tokens, "users": {"alice": "responder"},
        **auth}}})


def _app(access: Access) -> Starlette:
    async def ok(request: Request) -> JSONResponse:
        who = request.scope.get(PRINCIPAL)
        return JSONResponse({"status": "success", "who": who.name if who else None})
    routes = [Route(p, ok, methods=["GET", "POST", "DELETE"]) for p in (
        "/", "/api/v1/query", "/metrics", "/api/v2/silences", "/api/v1/write", "/-/reload", "/-/healthy")]
    gate = Middleware(AccessGate, access=access)
    return Starlette(routes=[*routes, *access_routes(access)], middleware=[gate])


@pytest.fixture
def clock() -> SimulatedClock:
    return SimulatedClock(1_700_000_000.0)


@pytest.fixture
def access(tmp_path: Path, clock: SimulatedClock) -> Access:
    return Access.of(_auth(tmp_path), Secret(ADMIN), clock)


@pytest.fixture
def client(access: Access) -> TestClient:
    return TestClient(_app(access), base_url="http://127.0.0.1:9464")


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_reads_need_credentials_off_loopback_and_a_refusal_says_what_to_send(client: TestClient) -> None:
    r = client.get("/api/v1/query")
    assert r.status_code == 401 and r.json()["errorType"] == "unauthorized"
    assert "needs the viewer role" in r.json()["error"] and "Authorization: Bearer" in r.json()["error"]
    assert r.headers.get_list("www-authenticate") == ['Bearer realm="inferwatch"', 'Basic realm="inferwatch"']
    assert client.get("/-/healthy").status_code == 200  # public
    page = client.get("/", headers={"Accept": "text/html"}, follow_redirects=False)  # a browser: sign in
    assert page.status_code == 303 and page.headers["location"] == "/login?next=/"


def test_reads_are_open_on_loopback_by_default_and_metrics_as_configured(tmp_path: Path,
                                                                          clock: SimulatedClock) -> None:
    cfg = _auth(tmp_path)
    loop = cfg.model_copy(update={"server": cfg.server.model_copy(update={"listen": "127.0.0.1:9464"})})
    c = TestClient(_app(Access.of(loop, Secret(ADMIN), clock)))
    assert c.get("/api/v1/query").status_code == 200
    assert c.get("/api/v1/audit").status_code == 401  # who did what: admin only, reads open or not
    assert c.post("/api/v2/silences").status_code == 401  # writes never open
    closed = _auth(tmp_path, anonymous_reads=True, anonymous_metrics=False)
    c = TestClient(_app(Access.of(closed, Secret(ADMIN), clock)))
    assert c.get("/api/v1/query").status_code == 200 and c.get("/metrics").status_code == 401


@pytest.mark.parametrize(("headers", "path", "status"), [
    # rule: viewer reads; responder silences; ingest only sends; admin does everything
    (_bearer(VIEW), "/api/v1/query", 200),
    (_bearer(VIEW), "/api/v2/silences", 403),
    (_bearer(RESP), "/api/v2/silences", 200),
    (_bearer(RESP), "/-/reload", 403),
    (_bearer(INGEST), "/api/v1/write", 200),
    (_bearer(INGEST), "/api/v2/silences", 403),
    (_bearer(ADMIN), "/-/reload", 200),  # server.api_token: admin, so no deployment breaks
    (_basic("alice", PASSWORD), "/api/v2/silences", 200),  # server.auth.users: alice is a responder
    (_basic("bob", PASSWORD), "/api/v2/silences", 403),  # default_user_role: viewer
    (_basic("bob", PASSWORD), "/api/v1/query", 200),
])
def test_roles(client: TestClient, headers: dict[str, str], path: str, status: int) -> None:
    method = "GET" if path == "/api/v1/query" else "POST"
    assert client.request(method, path, headers=headers).status_code == status


def test_refusals_name_the_caller_and_what_is_missing_never_the_secret(client: TestClient) -> None:
    r = client.post("/api/v2/silences", headers=_bearer(VIEW))
    # Alertmanager's API v2 answers errors as a JSON string (amtool prints it)
    assert r.json() == ("token 'grafana' (viewer) may not POST /api/v2/silences: that needs the "
                        "responder role (server.auth.tokens / server.auth.users set roles)")
    reload = client.post("/-/reload", headers=_bearer(VIEW)).json()
    assert reload["errorType"] == "forbidden" and "needs the admin role" in reload["error"]
    wrong = client.get("/api/v1/query", headers=_bearer("guess-0123456789"))
    assert wrong.status_code == 401 and "guess" not in wrong.text
    bad = client.get("/api/v1/query", headers=_basic("alice", "not-the-password"))
    assert bad.status_code == 401 and "not-the-password" not in bad.text and "'alice'" in bad.text
    assert client.get("/api/v1/query", headers=_basic("mallory", PASSWORD)).status_code == 401


def test_writes_are_audited_with_the_caller(client: TestClient, access: Access) -> None:
    client.post("/api/v2/silences", headers=_bearer(RESP))
    client.post("/api/v2/silences", headers=_bearer(VIEW))  # refused: not a write that happened
    assert [(e.who, e.path, e.status) for e in access.audit] == [
        ("token 'oncall' (responder)", "/api/v2/silences", 200)]
    assert client.get("/api/v1/audit", headers=_bearer(RESP)).status_code == 403  # admin only
    listed = client.get("/api/v1/audit", headers=_bearer(ADMIN)).json()["data"]
    assert listed[0]["who"] == "token 'oncall' (responder)"


def _sign_in(client: TestClient, **form: str) -> Any:
    return client.post("/login", data={"next": "/#/silences", **form}, follow_redirects=False)


def test_a_sign_in_sets_a_strict_http_only_session_and_writes_need_its_csrf_token(
        client: TestClient, clock: SimulatedClock) -> None:
    assert _sign_in(client, user="alice", password="wrong").status_code == 401
    r = _sign_in(client, user="alice", password=PASSWORD)
    assert r.status_code == 303 and r.headers["location"] == "/#/silences"
    cookies = r.headers.get_list("set-cookie")
    session = next(c for c in cookies if c.startswith("inferwatch_session="))
    assert "HttpOnly" in session and "SameSite=strict" in session and "Max-Age=43200" in session
    assert "Secure" not in session  # plain HTTP here; over TLS it is Secure (test_serve_web_config)
    csrf = client.cookies["inferwatch_csrf"]
    assert client.get("/api/v1/query").json()["who"] == "alice"  # the cookie reads
    # rule: a write by cookie needs the CSRF token (a page on another origin cannot read it)
    assert client.post("/api/v2/silences").status_code == 403
    assert "X-CSRF-Token" in client.post("/api/v2/silences").json()
    assert client.post("/api/v2/silences", headers={"X-CSRF-Token": "forged"}).status_code == 403
    other = {"X-CSRF-Token": csrf, "Origin": "http://evil.example"}
    assert client.post("/api/v2/silences", headers=other).status_code == 403
    ok = client.post("/api/v2/silences", headers={"X-CSRF-Token": csrf, "Origin": "http://127.0.0.1:9464"})
    assert ok.status_code == 200 and ok.json()["who"] == "alice"
    assert client.post("/-/reload", headers={"X-CSRF-Token": csrf}).status_code == 403  # still a responder
    clock.advance(12 * 3600.0 + 1)  # the session expires
    assert client.get("/api/v1/query").status_code == 401


def test_sign_in_by_token_sign_out_and_a_foreign_sign_in_form(client: TestClient) -> None:
    assert _sign_in(client, token=VIEW).status_code == 303
    assert client.get("/api/v1/query").json()["who"] == "grafana"
    assert client.post("/logout", follow_redirects=False).status_code == 303
    assert client.get("/api/v1/query").status_code == 401
    foreign = client.post("/login", data={"token": ADMIN}, headers={"Origin": "http://evil.example"},
                          follow_redirects=False)
    assert foreign.status_code == 403 and "inferwatch_session" not in foreign.headers.get("set-cookie", "")
    assert _sign_in(client, token=VIEW, next="//evil.example/").headers["location"] == "/"


def test_a_reload_applies_new_users_and_roles_to_open_sessions(tmp_path: Path, client: TestClient,
                                                               access: Access) -> None:
    _sign_in(client, user="alice", password=PASSWORD)
    csrf = {"X-CSRF-Token": client.cookies["inferwatch_csrf"]}
    assert client.post("/api/v2/silences", headers=csrf).status_code == 200
    note = access.prepare(_auth(tmp_path, users={}))()  # alice falls back to viewer
    assert "auth applied (3 named tokens, 2 users, reads need credentials)" in note
    assert client.post("/api/v2/silences", headers=csrf).status_code == 403


@pytest.mark.parametrize(("text", "says"), [
    ("basic_auth_users: {alice: plain}", "web.yml: basic_auth_users.alice: not a bcrypt hash"),
    ("tls_server_config: {cert_file: c, key_file: k, cipher_suites: [X]}", "cipher_suites: not supported"),
    ("tls_server_config: {cert_file: c, key_file: k, client_auth_type: RequireAndVerifyClientCert}",
     "needs client_ca_file"),
    ("tls_server_config: {cert_file: c, key_file: k, min_version: TLS9}", "tls_server_config.min_version"),
    ("tls_server_config: {cert_file: c, key_file: k}", "tls_server_config.cert_file: no such file"),
    ("basic_auth: {}", "basic_auth: unknown field"),
    ("[", "invalid YAML"),
])
def test_web_config_errors_name_the_file_and_key(tmp_path: Path, text: str, says: str) -> None:
    (tmp_path / "web.yml").write_text(text)
    with pytest.raises(ConfigError, match=r"web\.yml") as err:
        load_web_config(tmp_path / "web.yml")
    assert says in str(err.value)
    assert "plain" not in str(err.value) or "alice" in says  # never the value given as a hash


def test_prometheus_web_config_shape_is_read(tmp_path: Path) -> None:
    text = f"tls_server_config: {{min_version: TLS13}}\nhttp_server_config: {{http2: false}}\n" \
           f"basic_auth_users: {{alice: '{HASH}'}}\n"
    with pytest.raises(ConfigError, match="cert_file"):
        parse_web_config(text, source="web.yml")
    web = parse_web_config(text.replace("{min_version", "{cert_file: c, key_file: k, min_version"),
                           source="web.yml")
    assert web.tls_server_config is not None and web.tls_server_config.min_version == "TLS13"
    assert web.basic_auth_users == {"alice": HASH}


def test_token_sources_and_their_errors(tmp_path: Path, clock: SimulatedClock,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "t").write_text(VIEW + "\n")
    monkeypatch.setenv("ONCALL_TOKEN", RESP)
    tokens = [{"name": "f", "role": "viewer", "token_file": str(tmp_path / "t")},
              {"name": "e", "role": "responder", "token_env": "ONCALL_TOKEN"}]
    cfg = Config.model_validate({"server": {"auth": {"tokens": tokens}}})
    creds = Access.of(cfg, Secret(ADMIN), clock).credentials
    assert creds.by_token(VIEW).name == "f" and creds.by_token(RESP).name == "e"  # type: ignore[union-attr]
    monkeypatch.delenv("ONCALL_TOKEN")
    with pytest.raises(ConfigError, match=r"tokens\[e\].token_env: \$ONCALL_TOKEN is not set"):
        Access.of(cfg, Secret(ADMIN), clock)
    weak = [{"name": "s", "role": "admin", "token": "abc"}]
    short = Config.model_validate({"server": {"auth": {"tokens": weak}}})
    with pytest.raises(ConfigError, match="shorter than 16") as err:
        Access.of(short, Secret(ADMIN), clock)
    assert "abc" not in str(err.value)


def _cert(where: Path, name: str) -> tuple[Path, Path]:
    cert, key = where / f"{name}.crt", where / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "2", "-subj",
                    f"/CN={name}", "-addext", "subjectAltName=DNS:localhost", "-keyout", str(key), "-out",
                    str(cert)], check=True, capture_output=True, timeout=60)
    return cert, key


def _handshake(server: ssl.SSLContext, trust: Path) -> bool:
    """Whether a client trusting only ``trust`` completes a TLS handshake with ``server`` (in memory)."""
    a, b = socket.socketpair()
    done: list[BaseException] = []

    def serve() -> None:
        try:
            with server.wrap_socket(a, server_side=True) as s:
                s.recv(1)
        except (ssl.SSLError, OSError) as exc:
            done.append(exc)
    t = threading.Thread(target=serve)
    t.start()
    try:
        with ssl.create_default_context(cafile=str(trust)).wrap_socket(b, server_hostname="localhost") as c:
            c.sendall(b"x")
        return True
    except ssl.SSLError:
        return False
    finally:
        a.close()
        b.close()
        t.join(60)


def test_a_reload_loads_a_renewed_certificate_into_the_running_context(tmp_path: Path,
                                                                       clock: SimulatedClock) -> None:
    require_tool("openssl")
    old, new = _cert(tmp_path, "old"), _cert(tmp_path, "new")
    web = tmp_path / "web.yml"
    web.write_text(f"tls_server_config: {{cert_file: {old[0].name}, key_file: {old[1].name}}}\n")
    cfg = Config.model_validate({"server": {"auth": {"web_config_file": str(web)}}})
    access = Access.of(cfg, Secret(ADMIN), clock)
    assert access.tls is not None and _handshake(access.tls, old[0]) and not _handshake(access.tls, new[0])
    web.write_text(f"tls_server_config: {{cert_file: {new[0].name}, key_file: {old[1].name}}}\n")
    with pytest.raises(ConfigError, match=r"web\.yml: tls_server_config\.cert_file/key_file"):
        access.prepare(cfg)  # a key that is not the certificate's: refused, the running one untouched
    assert _handshake(access.tls, old[0])
    web.write_text(f"tls_server_config: {{cert_file: {new[0].name}, key_file: {new[1].name}}}\n")
    assert "TLS certificates reloaded" in access.prepare(cfg)()
    assert _handshake(access.tls, new[0]) and not _handshake(access.tls, old[0])
