"""Showing URLs, text and log lines without the secrets they may carry.

A URL is shown without its userinfo, query and fragment (``https://h/p``); text
that may echo a request (a receiver's error body) is shown with every known
secret replaced by ``<secret>``; httpx's own request log line is cut to the
URL's origin, since a webhook URL's path can be the secret (Slack).

>>> redact_url("https://user:pw@example.com:8443/hook?tok=abc#x")
'https://example.com:8443/hook'
>>> redact_text("echo: key=abc123&x=1", ["abc123"])
'echo: key=<secret>&x=1'
"""

from __future__ import annotations

import functools
import json
import logging
import typing
import urllib.parse
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel

__all__ = ["REDACTED", "HttpLogRedaction", "install_log_redaction", "mask_secret_fields", "redact_text",
           "redact_url", "secret_field_names", "url_origin"]

REDACTED = "<secret>"
_MIN_SECRET_LEN = 4  # shorter values (a user name "a") would blank out ordinary words


def _split(url: str) -> urllib.parse.SplitResult | None:
    try:
        parts = urllib.parse.urlsplit(url)
        _ = parts.port  # raises on a malformed port
    except ValueError:
        return None
    return parts


def _host(parts: urllib.parse.SplitResult) -> str:
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return host + (f":{parts.port}" if parts.port is not None else "")


def redact_url(url: str) -> str:
    """``url`` without userinfo, query and fragment (``<url>`` when it cannot be parsed)."""
    parts = _split(url)
    if parts is None or not parts.scheme:
        return "<url>"
    return urllib.parse.urlunsplit((parts.scheme, _host(parts), parts.path, "", ""))


def url_origin(url: str) -> str:
    """Scheme, host and port only, then ``/…`` when there was a path (its path may be the secret)."""
    parts = _split(url)
    if parts is None or not parts.scheme:
        return "<url>"
    return f"{parts.scheme}://{_host(parts)}" + ("/…" if parts.path.strip("/") else "")


def secret_forms(secret: str) -> set[str]:
    """A secret as it may appear in an echo: raw, URL-quoted (both ways) and JSON-escaped."""
    forms = {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret),
             json.dumps(secret)[1:-1]}
    return {f for f in forms if len(f) >= _MIN_SECRET_LEN}


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every form of every secret replaced by ``<secret>``, longest first."""
    forms = {f for s in secrets if s for f in secret_forms(s)}
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, REDACTED)
    return text


class HttpLogRedaction(logging.Filter):
    """Rewrites httpx's ``HTTP Request: METHOD URL ...`` record to show only the URL's origin."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep the record, with its URL argument cut to the origin."""
        args = record.args
        if isinstance(args, tuple) and len(args) >= 2 and str(record.msg).startswith("HTTP Request:"):
            record.args = (args[0], url_origin(str(args[1])), *args[2:])
        return True


_FILTER = HttpLogRedaction()


def install_log_redaction() -> None:
    """Attach the filter to httpx's logger (idempotent): ``-v`` never shows a key or webhook path."""
    logger = logging.getLogger("httpx")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)


def _types_in(tp: Any) -> Iterator[Any]:
    yield tp
    for arg in typing.get_args(tp):
        yield from _types_in(arg)


def secret_field_names() -> frozenset[str]:
    """Every config field (name and alias) typed ``Secret``, found by walking the config models.

    Receiver specs are found as the subclasses of ``ReceiverBase`` (the root types receivers by
    that base; the union of every type is assembled above this package): every spec defined,
    wherever its module, has its secrets masked.
    """
    from inferwatch.settings.receivers import ReceiverBase  # the room imports this module's package

    return _secret_names(tuple(_subclasses(ReceiverBase)))


def _subclasses(cls: type[BaseModel]) -> list[type[BaseModel]]:
    return [c for s in cls.__subclasses__() for c in (s, *_subclasses(s))]


@functools.cache
def _secret_names(receivers: tuple[type[BaseModel], ...]) -> frozenset[str]:
    from inferwatch.settings._root import BaseConfig  # the root imports this module
    from inferwatch.settings._types import Secret

    names: set[str] = set()
    todo: list[type[BaseModel]] = [BaseConfig, *receivers]
    seen: set[type[BaseModel]] = set(receivers)
    while todo:
        model = todo.pop()
        for name, f in model.model_fields.items():
            for t in _types_in(f.annotation):
                if t is Secret:
                    names.update(x for x in (name, f.alias) if x)
                elif isinstance(t, type) and issubclass(t, BaseModel) and t not in seen:
                    seen.add(t)
                    todo.append(t)
    return frozenset(names)


def mask_secret_fields(value: Any, names: frozenset[str] | None = None) -> Any:
    """A copy of parsed YAML with the value of every secret field replaced by ``<secret>``.

    >>> mask_secret_fields({"type": "nope", "key": "abc", "to": [{"password": "p"}]})
    {'type': 'nope', 'key': '<secret>', 'to': [{'password': '<secret>'}]}
    """
    names = secret_field_names() if names is None else names
    if isinstance(value, dict):
        return {k: REDACTED if k in names and v is not None else mask_secret_fields(v, names)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_secret_fields(v, names) for v in value]
    if isinstance(value, str) and "://" in value and ("@" in value or "?" in value):
        return redact_url(value)  # an action URL with user:pass@ or ?tok=
    return value
