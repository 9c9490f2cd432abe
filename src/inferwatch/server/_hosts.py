"""Who may reach the server: the ``Host`` check (DNS rebinding) and the warning for a public bind.

A server on a loopback address answers only requests whose ``Host`` names a
loopback address (or ``server.external_url``'s host): a web page the user
visits cannot rebind its own name to 127.0.0.1 and read the API. A server on
any other address accepts any ``Host``, and ``serve`` warns that its read API
has no authentication.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

__all__ = ["allowed_hosts", "exposure_warning", "host_allowed", "is_loopback"]

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, brackets allowed) is a loopback one.

    >>> is_loopback("127.0.0.1"), is_loopback("[::1]"), is_loopback("0.0.0.0"), is_loopback("localhost")
    (True, True, False, True)
    """
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(listen_host: str, external_url: str = "") -> frozenset[str] | None:
    """The ``Host`` names accepted (``None``: any) for a server listening on ``listen_host``."""
    if not is_loopback(listen_host):
        return None
    extra = urlsplit(external_url).hostname if external_url else None
    return frozenset({"localhost", "127.0.0.1", "::1", listen_host.strip("[]").lower(),
                      *([extra.lower()] if extra else [])})


def host_allowed(header: str, allowed: frozenset[str] | None) -> bool:
    """Whether a request's ``Host`` header (port stripped) is in ``allowed``.

    >>> ok = allowed_hosts("127.0.0.1")
    >>> host_allowed("127.0.0.1:9464", ok), host_allowed("[::1]:80", ok), host_allowed("evil.example", ok)
    (True, True, False)
    """
    if allowed is None:
        return True
    try:
        host = urlsplit(f"//{header}").hostname or ""
    except ValueError:
        return False
    return host in allowed or is_loopback(host)


def exposure_warning(listen_host: str, reads_open: bool = True) -> str | None:
    """The warning ``serve`` prints when it listens beyond loopback with reads open to anyone."""
    if is_loopback(listen_host) or not reads_open:
        return None
    return (f"listening on {listen_host or '0.0.0.0'}, beyond loopback: reads (queries, targets, alerts, "
            "silences) need no token (server.auth.anonymous_reads: true); keep the port behind a firewall "
            "or set it false")
