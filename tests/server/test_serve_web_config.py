"""``inferwatch serve`` under Prometheus's web configuration file: HTTPS with openssl-made
certificates on loopback, basic-auth users and named tokens with roles, reads that need
credentials, a sign-in over TLS, amtool over HTTPS, a reload that applies new users, and a bad
web config refused at start with the file and key named. One server for the whole story.
"""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
from pathlib import Path

import bcrypt
import httpx
import pytest
from tests._require import require_tool

from inferwatch.cli import main

from ._proc import serve

pytestmark = pytest.mark.slow

ADMIN = "admin-t0ken-for-web-config"
VIEWER = "viewer-t0ken-for-web-config"
RESPONDER = "responder-t0ken-for-web-config"
PASSWORD = "alice's long password"


def _hash(password: str) -> str:
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()


def _certificate(where: Path) -> tuple[Path, Path]:
    openssl = require_tool("openssl")
    cert, key = where / "server.crt", where / "server.key"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
                    "-out", str(cert)], check=True, capture_output=True, timeout=60)
    return cert, key


def _web(users: dict[str, str]) -> str:
    listed = ", ".join(f"{u}: '{h}'" for u, h in users.items())
    return (f"tls_server_config: {{cert_file: server.crt, key_file: server.key, min_version: TLS13}}\n"
            f"basic_auth_users: {{{listed}}}\n")


SILENCE = {"matchers": [{"name": "alertname", "value": "GpuHot", "isRegex": False}],
           "startsAt": "2020-01-01T00:00:00Z", "endsAt": "2099-01-01T00:00:00Z",
           "createdBy": "someone", "comment": "maintenance"}


def test_serve_with_a_web_config_file(tmp_path: Path) -> None:
    cert, _ = _certificate(tmp_path)
    (tmp_path / "web.yml").write_text(_web({"alice": _hash(PASSWORD)}))
    (tmp_path / "viewer.token").write_text(VIEWER)
    config = f"""
server:
  data_dir: '{tmp_path / "data"}'
  api_token: {ADMIN}
  auth:
    web_config_file: web.yml          # relative: to this file's directory
    anonymous_reads: false
    users: {{alice: responder}}
    tokens:
      - {{name: grafana, role: viewer, token_file: '{tmp_path / "viewer.token"}'}}
      - {{name: oncall, role: responder, token: {RESPONDER}}}
alerting:
  route: {{receiver: terminal, group_by: [alertname], group_wait: 0s}}
"""
    alice = httpx.BasicAuth("alice", PASSWORD)
    trust = ssl.create_default_context(cafile=str(cert))
    with serve(config, tmp_path) as s, httpx.Client(base_url=s.url, verify=trust, timeout=60) as c:
        assert s.url.startswith("https://") and "reads need credentials" in s.lines[-1]
        # reads need credentials; a refusal says what to send
        r = c.get("/api/v1/query", params={"query": "1"})
        assert r.status_code == 401 and "needs the viewer role" in r.json()["error"]
        viewer = {"Authorization": f"Bearer {VIEWER}"}
        assert c.get("/api/v1/query", params={"query": "1"}, headers=viewer).json()["status"] == "success"
        assert c.get("/-/healthy").status_code == 200
        # roles: the viewer cannot silence; alice (basic auth, responder) can; so can the responder token
        assert c.post("/api/v2/silences", json=SILENCE, headers=viewer).status_code == 403
        sid = c.post("/api/v2/silences", json=SILENCE, auth=alice).json()["silenceID"]
        assert c.post("/-/reload", auth=alice).status_code == 403  # reload is the admin's
        audit = c.get("/api/v1/audit", headers={"Authorization": f"Bearer {ADMIN}"}).json()["data"]
        assert [(e["who"], e["path"]) for e in audit] == [("user 'alice' (responder)", "/api/v2/silences")]

        # TLS 1.3 only (min_version): a client that stops at 1.2 is refused in the handshake
        old = ssl.create_default_context(cafile=str(cert))
        old.maximum_version = ssl.TLSVersion.TLSv1_2
        with pytest.raises(httpx.ConnectError):
            httpx.get(s.url + "/-/healthy", verify=old, timeout=30)

        # the dashboard's sign-in over TLS: a Secure, HttpOnly, SameSite=Strict session cookie
        signed = c.post("/login", data={"user": "alice", "password": PASSWORD}, follow_redirects=False)
        cookies = signed.headers.get_list("set-cookie")
        session = next(v for v in cookies if v.startswith("inferwatch_session="))
        assert signed.status_code == 303
        assert all(flag in session for flag in ("Secure", "HttpOnly", "SameSite=strict"))
        c.cookies.clear()

        # amtool (Alertmanager 0.25's client) over HTTPS with the responder token
        amtool = require_tool("amtool")
        http_config = tmp_path / "amtool-http.yml"
        http_config.write_text(f"authorization: {{type: Bearer, credentials: {RESPONDER}}}\n"
                               f"tls_config: {{ca_file: '{cert}'}}\n")
        out = subprocess.run([amtool, f"--alertmanager.url={s.url}", f"--http.config.file={http_config}",
                              "silence", "query", "-o", "json"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and [x["id"] for x in json.loads(out.stdout)] == [sid], out.stderr
        # inferwatch's own client verbs: https and the server's certificate from the same config
        mine = subprocess.run([sys.executable, "-m", "inferwatch", "silence", "list", "--json", "--config",
                               str(tmp_path / "inferwatch.yml"), "--url", s.url],
                              capture_output=True, text=True, timeout=120)
        assert mine.returncode == 0 and [x["id"] for x in json.loads(mine.stdout)] == [sid], mine.stderr

        # a reload re-reads the web config: a new user applies, a broken file leaves the running one
        (tmp_path / "web.yml").write_text(_web({"alice": _hash(PASSWORD), "carol": _hash("carol's pw 123")}))
        admin = {"Authorization": f"Bearer {ADMIN}"}
        reloaded = c.post("/-/reload", headers=admin)
        assert reloaded.status_code == 200
        assert "auth applied (2 named tokens, 2 users" in reloaded.json()["data"]
        assert c.get("/api/v1/rules", auth=("carol", "carol's pw 123")).status_code == 200
        (tmp_path / "web.yml").write_text("basic_auth_users: {carol: not-a-hash}\n")
        broken = c.post("/-/reload", headers=admin)
        assert broken.status_code == 400
        assert "web.yml: basic_auth_users.carol: not a bcrypt hash" in broken.text
        assert c.get("/api/v1/rules", auth=("carol", "carol's pw 123")).status_code == 200
    log = "".join(s.lines)
    assert "Traceback" not in log
    assert not any(secret in log for secret in (ADMIN, VIEWER, RESPONDER, PASSWORD)), log


def test_serve_refuses_a_bad_web_config_naming_the_file_and_key(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "web.yml").write_text("tls_server_config: {cert_file: nope.crt, key_file: nope.key}\n")
    (tmp_path / "inferwatch.yml").write_text(f"server: {{data_dir: '{tmp_path / 'data'}'}}\n")
    code = main(["serve", "--config", str(tmp_path / "inferwatch.yml"), "--listen", "127.0.0.1:0",
                 "--web.config.file", str(tmp_path / "web.yml")])  # refused before it listens
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert f"{tmp_path / 'web.yml'}: tls_server_config.cert_file: no such file" in err, err
