"""Scrape targets reached as Prometheus reaches them: ``basic_auth``, ``authorization``, ``tls_config``;
credentials in a target's URL are refused (they became the ``instance`` label of every series)."""

from __future__ import annotations

import base64
import http.server
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests._require import require_tool

from inferwatch._exceptions import ConfigError
from inferwatch.config import ScrapeTarget, parse_config
from inferwatch.model import SimulatedClock
from inferwatch.server import ScrapeLoop
from inferwatch.store import MemoryStore, parse_selector

BODY = b"# TYPE jobs_total counter\njobs_total 3\n"


class Guarded:
    """A loopback target that answers only the ``Authorization`` header it wants (401 otherwise)."""

    def __init__(self, want: str, tls: ssl.SSLContext | None = None) -> None:
        self.want, self.seen = want, []  # type: ignore[var-annotated]
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                got = self.headers.get("Authorization", "")
                outer.seen.append(got)
                ok = got == outer.want
                self.send_response(200 if ok else 401)
                self.send_header("Content-Length", str(len(BODY) if ok else 0))
                self.end_headers()
                if ok:
                    self.wfile.write(BODY)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}/metrics"


@pytest.fixture
def stop() -> Iterator[list[Guarded]]:
    made: list[Guarded] = []
    yield made
    for g in made:
        g.httpd.shutdown()
        g.httpd.server_close()


def _up(target: ScrapeTarget) -> tuple[float, list[str]]:
    store = MemoryStore()
    loop = ScrapeLoop([target], store, clock=SimulatedClock(1000.0))
    try:
        loop.scrape_once(1000.0)
    finally:
        loop.stop()
    (up,) = store.select(parse_selector("up"), 0, 1e12)
    return float(up.v[-1]), [str(s.labels) for s in store.select(parse_selector("jobs_total"), 0, 1e12)]


def test_basic_auth_with_a_password_or_a_password_file(tmp_path: Path, stop: list[Guarded]) -> None:
    g = Guarded("Basic " + base64.b64encode(b"scraper:s3cret").decode())
    stop.append(g)
    assert _up(ScrapeTarget(job="j", url=g.url))[0] == 0.0  # without credentials: 401, down
    auth = {"username": "scraper", "password": "s3cret"}
    up, series = _up(ScrapeTarget(job="j", url=g.url, basic_auth=auth))
    assert up == 1.0 and series and "s3cret" not in series[0] and "@" not in series[0]
    (tmp_path / "pw").write_text("s3cret\n")
    spec = {"username": "scraper", "password_file": str(tmp_path / "pw")}
    assert _up(ScrapeTarget(job="j", url=g.url, basic_auth=spec))[0] == 1.0


def test_authorization_with_credentials_or_a_credentials_file(tmp_path: Path, stop: list[Guarded]) -> None:
    g = Guarded("Bearer t0k")
    stop.append(g)
    assert _up(ScrapeTarget(job="j", url=g.url, authorization={"credentials": "t0k"}))[0] == 1.0
    (tmp_path / "tok").write_text("t0k")
    spec = {"type": "Bearer", "credentials_file": str(tmp_path / "tok")}
    assert _up(ScrapeTarget(job="j", url=g.url, authorization=spec))[0] == 1.0
    gone = {"credentials_file": str(tmp_path / "nope")}  # a file gone at scrape time: down, no traceback
    assert _up(ScrapeTarget(job="j", url=g.url, authorization=gone))[0] == 0.0


def test_tls_config_trusts_the_given_ca(tmp_path: Path, stop: list[Guarded]) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    openssl = require_tool("openssl")
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
                    "-out", str(cert)], check=True, capture_output=True, timeout=60)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    g = Guarded("Bearer t", tls=server)
    stop.append(g)
    auth = {"credentials": "t"}
    assert _up(ScrapeTarget(job="j", url=g.url, authorization=auth))[0] == 0.0  # an unknown CA: refused
    trusted = ScrapeTarget(job="j", url=g.url, authorization=auth, tls_config={"ca_file": str(cert)})
    assert _up(trusted)[0] == 1.0
    other = {"ca_file": str(cert), "server_name": "other.example"}  # verified against that name: refused
    assert _up(ScrapeTarget(job="j", url=g.url, authorization=auth, tls_config=other))[0] == 0.0
    gone = {"ca_file": str(tmp_path / "gone.pem")}  # a file that does not load: down, no traceback
    assert _up(ScrapeTarget(job="j", url=g.url, authorization=auth, tls_config=gone))[0] == 0.0


@pytest.mark.parametrize(("target", "says"), [
    # rule: a URL's userinfo would be the instance label of every series and alert (before: accepted)
    ("{job: a, url: 'http://u:PASS@127.0.0.1:9/metrics'}", "give them as basic_auth"),
    ("{job: a, url: 'http://127.0.0.1:9/m', basic_auth: {username: u, password: p}, "
     "authorization: {credentials: c}}", "basic_auth or authorization, not both"),
    ("{job: a, url: 'http://127.0.0.1:9/m', basic_auth: {username: u, password: p, password_file: /f}}",
     "password or password_file"),
    ("{job: a, url: 'https://127.0.0.1:9/m', tls_config: {cert_file: /c.pem}}", "go together"),
])
def test_credentials_in_the_url_and_conflicting_auth_are_refused(target: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as err:
        parse_config(f"scrape: {{targets: [{target}]}}")
    assert "PASS" not in str(err.value)
