"""``kubeconfig_file``: the API server, credentials and CA of a kubeconfig's current context.

As client-go's ``BuildConfigFromFlags("", path)`` reads it for Prometheus:
the ``current-context`` names a context, its ``cluster`` gives ``server``,
``certificate-authority`` (or ``-data``) and ``insecure-skip-tls-verify``;
its ``user`` gives ``token`` or ``tokenFile``, ``client-certificate`` /
``client-key`` (or ``-data``), or ``username`` and ``password``. Relative
file names are relative to the kubeconfig. ``exec`` and ``auth-provider``
plugins run programs: refused, naming the user.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from pathlib import Path
from typing import Any

import yaml

from inferwatch._exceptions import ConfigError

__all__ = ["read_kubeconfig"]


def _named(doc: dict[str, Any], section: str, name: str, where: str) -> dict[str, Any]:
    item = {"clusters": "cluster", "users": "user", "contexts": "context"}[section]
    for entry in doc.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            body = entry.get(item) or {}
            if not isinstance(body, dict):
                raise ConfigError(f"{where}: {section} {name!r}: {item} must be a mapping")
            return body
    raise ConfigError(f"{where}: no {item} named {name!r} in {section}")


def _file(base: Path, name: str) -> str:
    return str(base / name)


def _load_cert(ctx: ssl.SSLContext, user: dict[str, Any], base: Path, where: str) -> None:
    cert, key = user.get("client-certificate"), user.get("client-key")
    cert_data, key_data = user.get("client-certificate-data"), user.get("client-key-data")
    if cert_data or key_data:  # ssl loads a chain from files only: written to a private temporary file
        pem = base64.b64decode(cert_data or "") + b"\n" + base64.b64decode(key_data or "")
        fd, tmp = tempfile.mkstemp(suffix=".pem")
        try:
            os.write(fd, pem)
            os.close(fd)
            ctx.load_cert_chain(tmp)
        finally:
            os.unlink(tmp)
    elif cert:
        ctx.load_cert_chain(_file(base, cert), _file(base, key) if key else None)


def _tls(cluster: dict[str, Any], user: dict[str, Any], base: Path, where: str) -> ssl.SSLContext | bool:
    try:
        ctx = ssl.create_default_context()
        if cluster.get("certificate-authority-data"):
            ctx.load_verify_locations(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        elif cluster.get("certificate-authority"):
            ctx.load_verify_locations(cafile=_file(base, cluster["certificate-authority"]))
        if cluster.get("insecure-skip-tls-verify"):
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        _load_cert(ctx, user, base, where)
    except (OSError, ValueError, ssl.SSLError) as exc:
        raise ConfigError(f"{where}: TLS: {exc}") from None
    return ctx


def _headers(user: dict[str, Any], user_name: str, base: Path, where: str) -> dict[str, str]:
    for plugin in ("exec", "auth-provider"):
        if user.get(plugin):
            raise ConfigError(
                f"{where}: user {user_name!r}: {plugin} credential plugins are not supported "
                "(give a token, tokenFile or a client certificate)"
            )
    if user.get("token"):
        return {"Authorization": f"Bearer {user['token']}"}
    if user.get("tokenFile"):
        try:
            return {"Authorization": f"Bearer {Path(_file(base, user['tokenFile'])).read_text().strip()}"}
        except OSError as exc:
            raise ConfigError(f"{where}: user {user_name!r}: tokenFile: {exc.strerror}") from None
    if user.get("username"):
        pair = f"{user['username']}:{user.get('password', '')}".encode()
        return {"Authorization": "Basic " + base64.b64encode(pair).decode()}
    return {}


def read_kubeconfig(path: Path) -> tuple[str, dict[str, str], ssl.SSLContext | bool]:
    """The server URL, request headers and TLS verification of ``path``'s current context."""
    where = f"kubeconfig_file {path}"
    try:
        doc = yaml.safe_load(path.read_text("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: invalid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(doc, dict) or not doc.get("current-context"):
        raise ConfigError(
            f"{where}: no current-context (invalid configuration: no configuration has been provided)"
        )
    context = _named(doc, "contexts", str(doc["current-context"]), where)
    cluster = _named(doc, "clusters", str(context.get("cluster", "")), where)
    user_name = str(context.get("user", ""))
    user = _named(doc, "users", user_name, where) if user_name else {}
    server = str(cluster.get("server") or "")
    if not server.startswith(("http://", "https://")):
        raise ConfigError(f"{where}: cluster {context.get('cluster')!r} has no http(s) server URL")
    base = path.parent
    verify: ssl.SSLContext | bool = (
        _tls(cluster, user, base, where) if server.startswith("https://") else True
    )
    return server.rstrip("/"), _headers(user, user_name, base, where), verify
