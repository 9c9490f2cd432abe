"""E-mail against a real SMTP server on loopback (aiosmtpd): STARTTLS by default, implicit TLS, headers."""

from __future__ import annotations

import email
import email.utils
import socket
import ssl
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from alerting.conftest import alert
from inferwatch._exceptions import ConfigError, NotifyError
from inferwatch.alerting import AlertGroup, HttpClient, Notification
from inferwatch.alerting.notify import build_notifier
from inferwatch.config import EmailReceiverSpec, parse_config
from inferwatch.model import Labels

USER, PASSWORD = "alerts", "SMTP-PASSWORD-123"


@dataclass
class Mailbox:
    port: int
    got: list[bytes] = field(default_factory=list)
    tls: list[bool] = field(default_factory=list)  # per message: was the session encrypted
    logins: list[tuple[bytes, bool]] = field(default_factory=list)  # (user, over TLS)


@pytest.fixture
def cert(tmp_path: Path, require_tool: Callable[..., str]) -> Path:
    """A self-signed certificate for 127.0.0.1 (``cert.pem`` beside ``key.pem``)."""
    openssl = require_tool("openssl")
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(tmp_path / "key.pem"), "-out", str(tmp_path / "cert.pem"),
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return tmp_path / "cert.pem"


def _encrypted(server: Any, session: Any) -> bool:
    # STARTTLS sets session.ssl; implicit TLS shows on the transport
    return session.ssl is not None or server.transport.get_extra_info("ssl_object") is not None


def _server_ctx(cert: Path) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, cert.parent / "key.pem")
    return ctx


@pytest.fixture
def smtp_server(cert: Path) -> Iterator[Callable[..., Mailbox]]:
    """Start an aiosmtpd server: ``mode`` is ``starttls``, ``implicit`` or ``plain``."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    started: list[Any] = []

    def start(mode: str) -> Mailbox:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            box = Mailbox(sock.getsockname()[1])

        class Handler:
            async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
                box.got.append(envelope.content)
                box.tls.append(_encrypted(server, session))
                return "250 OK"

        def auth(server, session, envelope, mechanism, data):  # type: ignore[no-untyped-def]
            box.logins.append((data.login, _encrypted(server, session)))
            return AuthResult(success=data.login == USER.encode() and data.password == PASSWORD.encode())

        kwargs: dict[str, Any] = {"authenticator": auth, "auth_require_tls": mode != "plain"}
        if mode == "starttls":
            kwargs.update(tls_context=_server_ctx(cert), require_starttls=True)
        if mode == "implicit":  # aiosmtpd counts only STARTTLS for auth_require_tls; the login check
            kwargs.update(ssl_context=_server_ctx(cert), auth_require_tls=False)  # below sees the TLS
        if mode == "plain":
            kwargs.update(auth_require_tls=False)
        c = Controller(Handler(), hostname="127.0.0.1", port=box.port, **kwargs)
        c.start()
        started.append(c)
        return box

    yield start
    for c in started:
        c.stop()


def _note(now: float = 1_800_000_000.0, key: str = "g1") -> Notification:
    g = AlertGroup(key, Labels({"alertname": "HighLatency"}), (alert(),), now)
    return Notification("mail", (g,))


def _spec(box: Mailbox, cert: Path, **over: Any) -> EmailReceiverSpec:
    base: dict[str, Any] = {"name": "mail", "smarthost": f"127.0.0.1:{box.port}",
                            "to": ("oncall@example.com",), "from": "inferwatch@alerts.example.com",
                            "username": USER, "password": PASSWORD,
                            "ca_file": str(cert)}
    return EmailReceiverSpec.model_validate({**base, **over})


@pytest.mark.tools
def test_starttls_is_on_by_default_and_login_happens_encrypted(smtp_server, cert) -> None:  # type: ignore[no-untyped-def]
    box = smtp_server("starttls")
    build_notifier(_spec(box, cert), HttpClient(), "", None).notify(_note())
    assert box.tls == [True] and box.logins == [(USER.encode(), True)]
    msg = email.message_from_bytes(box.got[0])
    # Date is the flush time; Message-ID names the sender's domain
    assert email.utils.parsedate_to_datetime(msg["Date"]).timestamp() == 1_800_000_000.0
    assert msg["Message-ID"].startswith("<") and msg["Message-ID"].endswith("@alerts.example.com>")


@pytest.mark.tools
def test_implicit_tls(smtp_server, cert) -> None:  # type: ignore[no-untyped-def]
    box = smtp_server("implicit")
    build_notifier(_spec(box, cert, implicit_tls=True), HttpClient(), "", None).notify(_note())
    assert box.tls == [True] and box.logins == [(USER.encode(), True)]


def test_port_465_means_implicit_tls() -> None:
    assert EmailReceiverSpec(name="m", smarthost="smtp.example.com:465").uses_implicit_tls
    assert not EmailReceiverSpec(name="m", smarthost="smtp.example.com:587").uses_implicit_tls
    off = EmailReceiverSpec(name="m", smarthost="smtp.example.com:465", implicit_tls=False)
    assert not off.uses_implicit_tls


@pytest.mark.tools
def test_a_server_without_starttls_gets_no_credentials(smtp_server, cert) -> None:  # type: ignore[no-untyped-def]
    box = smtp_server("plain")
    with pytest.raises(NotifyError, match="does not offer STARTTLS") as e:
        build_notifier(_spec(box, cert), HttpClient(), "", None).notify(_note())
    assert not e.value.retryable and box.logins == [] and box.got == []


@pytest.mark.tools
def test_an_untrusted_certificate_is_refused(smtp_server, cert) -> None:  # type: ignore[no-untyped-def]
    box = smtp_server("starttls")
    with pytest.raises(NotifyError, match="certificate not trusted"):
        build_notifier(_spec(box, cert, ca_file=""), HttpClient(), "", None).notify(_note())
    assert box.logins == [] and box.got == []


@pytest.mark.tools
def test_a_missing_ca_file_is_a_clear_final_error(smtp_server, cert, tmp_path) -> None:  # type: ignore[no-untyped-def]
    box = smtp_server("starttls")
    with pytest.raises(NotifyError, match=r"ca_file .*nope.pem: cannot load \(FileNotFoundError\)") as e:
        spec = _spec(box, cert, ca_file=str(tmp_path / "nope.pem"))
        build_notifier(spec, HttpClient(), "", None).notify(_note())
    assert not e.value.retryable and box.got == []


def test_a_line_break_in_a_label_cannot_inject_a_header(tmp_path: Path) -> None:
    n = build_notifier(_spec(Mailbox(25), tmp_path / "unused.pem"), HttpClient(), "", None)
    labels = Labels({"alertname": "HighLatency", "service": "a\r\nBcc: attacker@example.com"})
    msg = n.message(Notification("mail", (AlertGroup("g", labels, (alert(),), 1.0),)))  # type: ignore[attr-defined]
    assert msg["Bcc"] is None and "Bcc: attacker@example.com" in msg["Subject"]


def test_login_in_clear_is_refused_at_load_unless_allowed() -> None:
    cfg = "alerting: {receivers: [{name: m, type: email, smarthost: 'h:25', username: u, password: p, %s}]}"
    with pytest.raises(ConfigError, match="allow_insecure_auth") as e:
        parse_config(cfg % "starttls: false")
    assert "receivers[0]" in str(e.value)
    assert parse_config(cfg % "starttls: false, allow_insecure_auth: true")


def test_message_id_is_stable_for_a_resend_and_differs_between_notifications(tmp_path: Path) -> None:
    n = build_notifier(_spec(Mailbox(25), tmp_path / "unused.pem"), HttpClient(), "", None)
    notes = (_note(), _note(), _note(key="g2"), _note(now=1.0))
    ids = [n.message(x)["Message-ID"] for x in notes]  # type: ignore[attr-defined]
    assert ids[0] == ids[1] and len(set(ids)) == 3
