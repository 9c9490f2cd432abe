"""The server's TLS from the web configuration file: one ``SSLContext``, reloaded in place.

A reload loads the certificate, key and client CAs again into the same context, so new
connections get them at once (a renewed certificate needs no restart); connections already
open keep theirs.
"""

from __future__ import annotations

import ssl

from inferwatch._exceptions import ConfigError
from inferwatch.config import TLS_VERSIONS, TlsServerConfig

__all__ = ["configure_tls", "server_tls"]


def server_tls(tls: TlsServerConfig, source: str) -> ssl.SSLContext:
    """A server context for ``tls`` (``ConfigError`` naming ``source`` and the key that failed)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    configure_tls(ctx, tls, source)
    return ctx


def configure_tls(ctx: ssl.SSLContext, tls: TlsServerConfig, source: str) -> None:
    """Load ``tls`` into ``ctx``: certificate and key, client CAs, verification, versions."""
    try:
        ctx.load_cert_chain(tls.cert_file, tls.key_file)
    except (ssl.SSLError, OSError) as exc:
        raise ConfigError(f"{source}: tls_server_config.cert_file/key_file: cannot load {tls.cert_file!r} "
                          f"with {tls.key_file!r}: {_why(exc)}") from None
    if tls.client_ca_file:
        try:
            ctx.load_verify_locations(cafile=tls.client_ca_file)
        except (ssl.SSLError, OSError) as exc:
            raise ConfigError(f"{source}: tls_server_config.client_ca_file: cannot load "
                              f"{tls.client_ca_file!r}: {_why(exc)}") from None
    ctx.verify_mode = tls.verify_mode
    ctx.minimum_version = TLS_VERSIONS[tls.min_version]
    ctx.maximum_version = TLS_VERSIONS[tls.max_version]
    if tls.prefer_server_cipher_suites:
        ctx.options |= ssl.OP_CIPHER_SERVER_PREFERENCE


def _why(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLError):
        return exc.reason or str(exc)
    return getattr(exc, "strerror", None) or str(exc)
