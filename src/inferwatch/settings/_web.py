"""Prometheus's web configuration file (``--web.config.file``, exporter-toolkit's format): TLS and
``basic_auth_users`` with bcrypt hashes. The same file works for Prometheus and for ``serve``.

    tls_server_config:
      cert_file: server.crt            # relative paths: to this file's directory
      key_file: server.key
      client_auth_type: RequireAndVerifyClientCert
      client_ca_file: clients-ca.crt
      min_version: TLS12
    basic_auth_users:
      alice: $2b$10$...                # htpasswd -nBC 10 "" | tr -d ':\\n'

What ``serve`` cannot honour (``cipher_suites``, ``curve_preferences``, ``client_allowed_sans``,
response ``headers``, ``RequireAnyClientCert``) is refused by name, never silently ignored.

>>> parse_web_config("basic_auth_users: {}", source="web.yml").tls_server_config is None
True
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, model_validator

from inferwatch._exceptions import ConfigError
from inferwatch.settings._load import describe_validation
from inferwatch.settings._types import FrozenModel
from inferwatch.settings._yaml import safe_load_strict

__all__ = ["TLS_VERSIONS", "TlsServerConfig", "WebConfig", "load_web_config", "parse_web_config"]

TLS_VERSIONS = {"TLS10": ssl.TLSVersion.TLSv1, "TLS11": ssl.TLSVersion.TLSv1_1,
                "TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
"""exporter-toolkit's version names and Python's."""
_CLIENT_AUTH = {"NoClientCert": ssl.CERT_NONE, "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
                "RequireAndVerifyClientCert": ssl.CERT_REQUIRED}
_UNSUPPORTED = ("cipher_suites", "curve_preferences", "client_allowed_sans")
_BCRYPT_PREFIXES = ("$2a$", "$2b$", "$2y$")


class TlsServerConfig(FrozenModel):
    """``tls_server_config``: the server's certificate, client certificates, the TLS versions."""

    cert_file: str = Field(description="the server's certificate chain (PEM)")
    key_file: str = Field(description="its private key (PEM)")
    client_auth_type: Literal["NoClientCert", "VerifyClientCertIfGiven", "RequireAndVerifyClientCert",
                              "RequestClientCert", "RequireAnyClientCert"] = "NoClientCert"
    client_ca_file: str | None = Field(None, description="CAs that sign client certificates (PEM)")
    min_version: Literal["TLS10", "TLS11", "TLS12", "TLS13"] = "TLS12"
    max_version: Literal["TLS10", "TLS11", "TLS12", "TLS13"] = "TLS13"
    prefer_server_cipher_suites: bool = True

    @model_validator(mode="before")
    @classmethod
    def _refuse_unsupported(cls, data: Any) -> Any:
        for key in _UNSUPPORTED:
            if isinstance(data, dict) and data.get(key):
                raise ValueError(f"{key}: not supported by inferwatch serve (Python's TLS chooses them); "
                                 "remove it or use a TLS-terminating proxy")
        return {k: v for k, v in data.items() if k not in _UNSUPPORTED} if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _consistent(self) -> TlsServerConfig:
        if self.client_auth_type in ("RequestClientCert", "RequireAnyClientCert"):
            raise ValueError(f"client_auth_type {self.client_auth_type}: not supported (Python's TLS "
                             "verifies every certificate it asks for): use VerifyClientCertIfGiven or "
                             "RequireAndVerifyClientCert with client_ca_file")
        if _CLIENT_AUTH[self.client_auth_type] != ssl.CERT_NONE and not self.client_ca_file:
            raise ValueError(f"client_auth_type {self.client_auth_type} needs client_ca_file")
        if TLS_VERSIONS[self.min_version] > TLS_VERSIONS[self.max_version]:
            raise ValueError(f"min_version {self.min_version} is above max_version {self.max_version}")
        return self

    @property
    def verify_mode(self) -> ssl.VerifyMode:
        """Python's ``verify_mode`` for ``client_auth_type``."""
        return _CLIENT_AUTH[self.client_auth_type]


class HttpServerConfig(FrozenModel):
    """``http_server_config``: accepted for Prometheus's files (``serve`` speaks HTTP/1.1 only)."""

    http2: bool = True

    @model_validator(mode="before")
    @classmethod
    def _no_headers(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("headers"):
            raise ValueError("headers: not supported by inferwatch serve (it sets its own security headers)")
        return {k: v for k, v in data.items() if k != "headers"} if isinstance(data, dict) else data


class WebConfig(FrozenModel):
    """The whole web configuration file."""

    tls_server_config: TlsServerConfig | None = None
    http_server_config: HttpServerConfig = Field(default_factory=HttpServerConfig)
    basic_auth_users: dict[str, str] = Field(default_factory=dict, description="user name -> bcrypt hash")



def _check_users(users: Any, source: str) -> None:
    """``basic_auth_users`` checked here, not by pydantic, so no error can echo a hash."""
    if not isinstance(users, dict):
        raise ConfigError(f"{source}: basic_auth_users: expected a mapping of user name to bcrypt hash")
    for name, digest in users.items():
        if not isinstance(name, str) or not name or ":" in name:
            raise ConfigError(f"{source}: basic_auth_users: user {str(name)!r}: a name without ':' is needed")
        if not isinstance(digest, str) or not digest.startswith(_BCRYPT_PREFIXES) or len(digest) != 60:
            raise ConfigError(f"{source}: basic_auth_users.{name}: not a bcrypt hash ($2y$, $2b$ or $2a$ and "
                              "60 characters; make one with: htpasswd -nBC 10 \"\" | tr -d ':\\n')")


def parse_web_config(text: str, *, source: str, base: Path | None = None) -> WebConfig:
    """Validate the file's text (``source`` names it in errors); relative paths resolved against
    ``base`` and checked to exist."""
    try:
        data = safe_load_strict(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping, got {type(data).__name__}")
    _check_users(data.get("basic_auth_users") or {}, source)
    try:
        web = WebConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_validation(exc, source).replace("Value error, ", "")) from None
    return _resolved(web, base, source) if base is not None else web


def _resolved(web: WebConfig, base: Path, source: str) -> WebConfig:
    tls = web.tls_server_config
    if tls is None:
        return web
    update: dict[str, Any] = {}
    for key in ("cert_file", "key_file", "client_ca_file"):
        value = getattr(tls, key)
        if value is None:
            continue
        path = base / value
        if not path.is_file():
            raise ConfigError(f"{source}: tls_server_config.{key}: no such file {str(path)!r}")
        update[key] = str(path)
    return web.model_copy(update={"tls_server_config": tls.model_copy(update=update)})


def load_web_config(path: str | Path) -> WebConfig:
    """Read and validate the web configuration file at ``path`` (``ConfigError`` naming file and key)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: web config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read web config file: {exc}") from None
    return parse_web_config(text, source=str(p), base=p.parent)
