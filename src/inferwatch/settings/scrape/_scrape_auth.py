"""How a scrape target is reached: ``basic_auth``, ``authorization``, ``tls_config`` (as in Prometheus).

Credentials live here, never in the URL: a URL's userinfo would become the
``instance`` label of every series and alert, and be shown wherever the URL
is. Files (``password_file``, ``credentials_file``) are read at each scrape,
so a rotated secret is used without a reload.

>>> BasicAuth(username="u", password="p").header()
'Basic dTpw'
>>> Authorization(credentials="t0k").header()
'Bearer t0k'
"""

from __future__ import annotations

import base64
import ssl
from pathlib import Path

from pydantic import model_validator

from inferwatch.settings._types import FrozenModel, Secret

__all__ = ["Authorization", "BasicAuth", "TLSConfig"]


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError as exc:
        raise OSError(f"{what} {path}: cannot read ({exc.strerror})") from None


class BasicAuth(FrozenModel):
    """HTTP basic authentication: ``username`` with ``password`` or ``password_file``."""

    username: str
    password: Secret | None = None
    password_file: str | None = None

    @model_validator(mode="after")
    def _one_password(self) -> BasicAuth:
        if self.password is not None and self.password_file is not None:
            raise ValueError("give password or password_file, not both")
        return self

    def header(self) -> str:
        """The ``Authorization`` header's value (reads ``password_file`` now)."""
        pw = self.password.reveal() if self.password is not None else (
            _read(self.password_file, "basic_auth.password_file") if self.password_file else "")
        return "Basic " + base64.b64encode(f"{self.username}:{pw}".encode()).decode()


class Authorization(FrozenModel):
    """An ``Authorization: <type> <credentials>`` header (``type`` Bearer by default)."""

    type: str = "Bearer"
    credentials: Secret | None = None
    credentials_file: str | None = None

    @model_validator(mode="after")
    def _one_credential(self) -> Authorization:
        if self.credentials is not None and self.credentials_file is not None:
            raise ValueError("give credentials or credentials_file, not both")
        if self.type.strip().lower() == "basic":
            raise ValueError("type Basic: use basic_auth instead")
        return self

    def header(self) -> str:
        """The header's value (reads ``credentials_file`` now)."""
        cred = self.credentials.reveal() if self.credentials is not None else (
            _read(self.credentials_file, "authorization.credentials_file") if self.credentials_file else "")
        return f"{self.type} {cred}"


class TLSConfig(FrozenModel):
    """TLS to the target: a CA to trust, a client certificate, the name to verify, or no verification."""

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    server_name: str | None = None
    insecure_skip_verify: bool = False

    @model_validator(mode="after")
    def _pair(self) -> TLSConfig:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("cert_file and key_file go together")
        return self

    def context(self) -> ssl.SSLContext:
        """The SSL context for the target's client (``OSError`` naming the file that does not load).

        Files are read when the scrape loop starts, not when the config loads, so a config can be
        checked on another machine; a target whose files do not load is down with the reason.
        """
        try:
            ctx = ssl.create_default_context(cafile=self.ca_file)
            if self.cert_file and self.key_file:
                ctx.load_cert_chain(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as exc:
            raise OSError(f"tls_config: cannot load {self.ca_file or self.cert_file} ({exc})") from None
        if self.insecure_skip_verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        return ctx
