"""Who is asking: named bearer tokens, the web config's users (bcrypt), each with a role.

The credentials are built from ``server.auth`` and the web configuration file at start and at
each reload; token values come from the config, a file or an environment variable and are
never shown (a ``Secret``). ``server.api_token`` (or the generated one) is the admin token
``api_token``, so a deployment that knew only it keeps working.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from inferwatch._exceptions import ConfigError
from inferwatch.config import AuthConfig, Role, Secret, WebConfig

__all__ = ["ADMIN_TOKEN_NAME", "Credentials", "Principal", "credentials_from", "parse_basic"]

ADMIN_TOKEN_NAME = "api_token"
_CACHE_MAX = 4096


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: its name (a token's or a user's), role, and how it proved it."""

    name: str
    role: Role
    via: str
    """``token``, ``basic`` or ``session``."""

    def describe(self) -> str:
        """``token 'grafana' (viewer)``: for refusals and the audit (never a secret)."""
        kind = "token" if self.via == "token" else "user"
        return f"{kind} {self.name!r} ({self.role})"


def parse_basic(value: str) -> tuple[str, str] | None:
    """``(user, password)`` of an ``Authorization: Basic`` value, or ``None`` when malformed.

    >>> parse_basic("Basic " + base64.b64encode(b"alice:s3cret").decode())
    ('alice', 's3cret')
    """
    scheme, _, rest = value.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, sep, password = base64.b64decode(rest.strip(), validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return (user, password) if sep else None


class Credentials:
    """The tokens and users the server accepts now (one object per start or reload)."""

    def __init__(self, admin: Secret, tokens: Sequence[tuple[str, Secret, Role]] = (),
                 users: Mapping[str, tuple[str, Role]] | None = None) -> None:
        self._admin = admin  # a LiveToken: a changed server.api_token reaches this object
        self._tokens = tuple(tokens)
        self._users = dict(users or {})
        self._checked: dict[bytes, bool] = {}  # bcrypt results: a client sends basic auth on every request
        self._lock = threading.Lock()

    @property
    def has_users(self) -> bool:
        """Whether the web config lists users (``WWW-Authenticate: Basic`` is offered then)."""
        return bool(self._users)

    def by_token(self, presented: str) -> Principal | None:
        """The principal whose token ``presented`` is (every token compared, in constant time)."""
        got = presented.encode()
        found: Principal | None = None
        for name, secret, role in ((ADMIN_TOKEN_NAME, self._admin, "admin"), *self._tokens):
            if hmac.compare_digest(got, secret.reveal().encode()) and found is None:
                found = Principal(name, role, "token")
        return found

    def by_password(self, user: str, password: str) -> Principal | None:
        """The user, when ``password`` matches its bcrypt hash (slow on a cache miss: run off the loop)."""
        import bcrypt

        digest, role = self._users.get(user, (_DUMMY_HASH, "viewer"))
        key = hashlib.sha256(b"\0".join((user.encode(), password.encode(), digest.encode()))).digest()
        with self._lock:
            ok = self._checked.get(key)
        if ok is None:  # an unknown user costs a bcrypt check too, so timing does not tell names
            ok = bcrypt.checkpw(password.encode(), digest.encode()) and user in self._users
            with self._lock:
                if len(self._checked) >= _CACHE_MAX:
                    self._checked.clear()
                self._checked[key] = ok
        return Principal(user, role, "basic") if ok else None

    def cached(self, user: str, password: str) -> bool:
        """Whether ``by_password`` answers from its cache (no bcrypt work)."""
        digest, _ = self._users.get(user, (_DUMMY_HASH, "viewer"))
        key = hashlib.sha256(b"\0".join((user.encode(), password.encode(), digest.encode()))).digest()
        with self._lock:
            return key in self._checked

    def role_of(self, name: str, via: str) -> Role | None:
        """The current role of a signed-in principal (``None``: it is gone since)."""
        if via == "basic":
            return self._users[name][1] if name in self._users else None
        if name == ADMIN_TOKEN_NAME:
            return "admin"
        return next((role for n, _, role in self._tokens if n == name), None)


# bcrypt of a random password (cost 10), checked for unknown users
_DUMMY_HASH = "$2b$10$3euPcmQFCiblsZeEu5s7p.9OVHgeHWFDk9nhMqZ0m/3pd/lhwZgES"


def _token_value(spec_name: str, token: Secret | None, token_file: str | None,
                 token_env: str | None) -> Secret:
    where = f"server.auth.tokens[{spec_name}]"
    if token is not None:
        value = token.reveal()
    elif token_file is not None:
        try:
            value = Path(token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{where}.token_file: cannot read {token_file!r} "
                              f"({getattr(exc, 'strerror', None) or exc.__class__.__name__})") from None
    else:
        value = os.environ.get(token_env or "", "").strip()
        if not value:
            raise ConfigError(f"{where}.token_env: ${token_env} is not set")
    if len(value) < 16:
        raise ConfigError(f"{where}: the token is shorter than 16 characters (too easy to guess)")
    return Secret(value)


def credentials_from(auth: AuthConfig, web: WebConfig | None, admin: Secret) -> Credentials:
    """The credentials of ``server.auth`` and the web config file (``ConfigError`` naming the token)."""
    tokens = [(t.name, _token_value(t.name, t.token, t.token_file, t.token_env), t.role) for t in auth.tokens]
    values = [s.reveal() for _, s, _ in tokens] + [admin.reveal()]
    if len(set(values)) != len(values):
        raise ConfigError("server.auth.tokens: two tokens (or one and server.api_token) have the same value")
    users = {name: (digest, auth.users.get(name, auth.default_user_role))
             for name, digest in (web.basic_auth_users if web else {}).items()}
    unknown = sorted(set(auth.users) - set(users))
    if unknown:
        raise ConfigError(f"server.auth.users: {unknown} not in the web config file's basic_auth_users")
    return Credentials(admin, tokens, users)
