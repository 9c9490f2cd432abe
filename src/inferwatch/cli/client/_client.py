"""The server client shared by the on-call verbs: address and token from the config and its data dir."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # ssl (OpenSSL: MiB resident) only when a call needs TLS: the edge agent loads this file
    import ssl

__all__ = ["add_server_args", "call", "since_start"]


def add_server_args(p: argparse.ArgumentParser, *, again: bool = False) -> None:
    """``--url`` and ``--token`` (``again``: an action's copy of its verb's, not resetting them)."""
    default = argparse.SUPPRESS if again else None
    p.add_argument("--url", default=default,
                   help="server URL (default: http://<server.listen> from the config; https:// when its "
                   "web config file has tls_server_config)")
    p.add_argument("--token", default=default, help="API token for writes (default: $INFERWATCH_API_TOKEN, "
                   "server.api_token, else the data directory's api_token file)")


def _tls(web_config_file: str | None) -> ssl.SSLContext | None:
    """Trust for a server serving TLS from ``web_config_file``: the system's CAs and its own certificate
    (a self-signed one verifies too); ``None`` when it serves plain HTTP."""
    from inferwatch.config import load_web_config

    tls = load_web_config(web_config_file).tls_server_config if web_config_file else None
    if tls is None:
        return None
    import ssl

    ctx = ssl.create_default_context()
    ctx.load_verify_locations(cafile=tls.cert_file)
    return ctx


def _target(args: argparse.Namespace) -> tuple[str, str, str, ssl.SSLContext | None]:
    """The server's URL, the token to send, where it came from (for a 401's message), the TLS trust."""
    from inferwatch.config import env, load_config

    cfg = load_config(args.config)
    tls = _tls(cfg.server.auth.web_config_file)
    url = args.url or f"{'https' if tls else 'http'}://{cfg.server.listen}"
    path = Path(os.environ.get(env.ENV_DATA_DIR) or cfg.server.data_dir) / "api_token"
    sources = (
        (args.token, "--token"),
        (os.environ.get(env.ENV_API_TOKEN), f"${env.ENV_API_TOKEN}"),
        (cfg.server.api_token.reveal() if cfg.server.api_token else None, "the config's server.api_token"),
        (path.read_text().strip() if path.is_file() else None, str(path)),
    )
    for token, source in sources:
        if token:
            return url.rstrip("/"), token, source, tls
    return url.rstrip("/"), "", f"none of --token, ${env.ENV_API_TOKEN}, server.api_token, {path}", tls


def _refused(url: str, source: str, token: str, server_says: str) -> str:
    """A 401 in words: which token was sent (never its value) and where the server's is."""
    sent = (f"the token from {source} is not the server's" if token
            else f"no token was sent ({source} has one)")
    return (f"the server at {url} refused the write (401): {sent}; use the server's API token: its "
            "$INFERWATCH_API_TOKEN, else its server.api_token, else the api_token file in its data "
            f"directory (printed at its first start), or a named token of its server.auth.tokens "
            f"[server: {server_says}]")


def call(args: argparse.Namespace, method: str, path: str, body: Any = None,
         params: list[tuple[str, str | int | float | bool | None]] | None = None) -> Any:
    """One request; an error answer or an unreachable server is an ``InputError`` (one line)."""
    import httpx

    from inferwatch._exceptions import InputError

    url, token, source, tls = _target(args)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        resp = httpx.request(method, url + path, json=body, headers=headers, params=params, timeout=10,
                             verify=tls if tls is not None else True)
    except httpx.HTTPError as exc:
        raise InputError(f"cannot reach the server at {url}: {exc.__class__.__name__}") from None
    if resp.status_code >= 400:
        try:
            answer = resp.json()
            msg = answer if isinstance(answer, str) else answer.get("error", resp.text)
        except (ValueError, AttributeError):
            msg = resp.text
        # the whole message, on one line (a server error may span lines; never a traceback)
        said = " ".join(str(msg).split())
        if resp.status_code == 401:
            raise InputError(_refused(url, source, token, said))
        raise InputError(f"server answered {resp.status_code}: {said}")
    return resp.json()


def since_start(since: str) -> float:
    """The wall-clock start that ``--since SINCE`` (a duration such as ``1h``) asks for.

    Raises ``InputError`` naming ``--since`` when the duration does not parse.
    """
    from inferwatch._exceptions import InputError
    from inferwatch.model import SystemClock, parse_duration

    try:
        return SystemClock().now() - parse_duration(since)
    except ValueError as exc:
        raise InputError(f"--since: {exc}") from None
