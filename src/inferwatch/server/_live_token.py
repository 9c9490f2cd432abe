"""The server's write token as every guard holds it: one object, so a reload can change it for all."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from inferwatch.config import Config, Secret, env
from inferwatch.server.api import resolve_api_token

__all__ = ["LiveToken", "token_reload"]


class LiveToken(Secret):
    """A ``Secret`` that a config reload may replace (``set``); every route holding it sees the new one.

    >>> t = LiveToken(Secret("a")); t.set(Secret("b")); t.reveal(), str(t)
    ('b', '<secret>')
    """

    __slots__ = ()

    def __init__(self, first: Secret) -> None:
        super().__init__(first.reveal())

    def set(self, token: Secret) -> None:
        """Use ``token`` from now on."""
        self._value = token.reveal()


def token_reload(token: Secret, data_dir: Path, announce: Callable[[str], None]) -> Callable[[Config], str]:
    """What a reload calls when ``server.api_token`` changed: applies it, and says how it went."""
    def apply(config: Config) -> str:
        if not isinstance(token, LiveToken):  # the demo's own token
            return "server.api_token changes take effect after a restart"
        if os.environ.get(env.ENV_API_TOKEN):
            return f"server.api_token changed, but ${env.ENV_API_TOKEN} overrides it"
        token.set(resolve_api_token(config, data_dir, announce))
        return "server.api_token applied"
    return apply
