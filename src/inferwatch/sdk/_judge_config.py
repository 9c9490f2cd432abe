"""The asynchronous judge's config: a plain frozen dataclass (the SDK imports no pydantic).

A judge is any OpenAI-compatible chat completions endpoint (OpenAI, Azure's
OpenAI-compatible route, vLLM, SGLang, Ollama, LiteLLM): ``POST {base_url}/chat/completions``
with a rubric as the system message and the prompt and answer as the user's; the first
number in its answer is the score.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from inferwatch._env import ENV_JUDGE_API_KEY
from inferwatch._exceptions import ConfigError

__all__ = ["DEFAULT_RUBRIC", "JudgeConfig"]

DEFAULT_RUBRIC = (
    "You grade the answer an AI assistant gave to a user's question. Consider whether it is "
    "correct, relevant, complete and safe. Reply with one number between 0 and 1 (0: useless or "
    "wrong, 1: excellent) and nothing else."
)
"""The system message sent with every generation unless ``JudgeConfig.rubric`` says otherwise."""


@dataclass(frozen=True, slots=True)
class JudgeConfig:
    """Where and how often generations are judged, off the request path.

    >>> JudgeConfig(base_url="http://127.0.0.1:8000/v1", model="qwen2.5-7b", sample=0.05).name
    'judge'
    >>> JudgeConfig(base_url="http://127.0.0.1:8000/v1", model="m", api_key="sk-secret")
    JudgeConfig(base_url='http://127.0.0.1:8000/v1', model='m', api_key=<secret>, name='judge', ...)
    >>> JudgeConfig(base_url="ftp://x", model="m")
    Traceback (most recent call last):
    ...
    inferwatch._exceptions.ConfigError: judge.base_url: must be an http:// or https:// URL, got 'ftp://x'
    """

    base_url: str
    """The API's base, e.g. ``https://api.openai.com/v1``: requests go to ``{base_url}/chat/completions``."""
    model: str
    """The judge model's name, sent as the request's ``model``."""
    api_key: str | None = field(default=None, repr=False)
    """Sent as ``Authorization: Bearer``; None: read from ``api_key_env`` (absent: no header).
    Never logged, never in the repr."""
    api_key_env: str = ENV_JUDGE_API_KEY
    name: str = "judge"
    """The score's ``name`` label (``inferwatch_generation_score{name="judge"}``)."""
    sample: float = 0.1
    """The share of generations judged (0-1), drawn on the request thread."""
    rubric: str = DEFAULT_RUBRIC
    queue_size: int = 1000
    """Generations waiting for the judge; one more is dropped and counted (``outcome="dropped"``)."""
    rate_per_s: float = 5.0
    """At most this many requests a second to the judge."""
    daily_tokens: int = 1_000_000
    """Tokens (the answers' ``usage.total_tokens``) a UTC day; past it ``outcome="budget"`` until midnight."""
    timeout_s: float = 30.0
    retries: int = 2
    """Attempts after the first on a timeout, a connection error, 429 or 5xx."""
    backoff_s: float = 1.0
    """The wait before the first retry, doubled before each next one."""
    max_tokens: int = 16
    max_chars: int = 8000
    """The prompt and the answer are each cut to this many characters (bounds the tokens a call costs)."""

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str) or not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"judge.base_url: must be an http:// or https:// URL, got {self.base_url!r}")
        for name in ("model", "name", "rubric", "api_key_env"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ConfigError(f"judge.{name}: must be a non-empty string, got {getattr(self, name)!r}")
        if self.api_key is not None and not isinstance(self.api_key, str):
            raise ConfigError("judge.api_key: must be a string")
        _number("sample", self.sample, 0.0, 1.0)
        _number("rate_per_s", self.rate_per_s, 1e-6, math.inf)
        _number("timeout_s", self.timeout_s, 1e-3, math.inf)
        _number("backoff_s", self.backoff_s, 0.0, math.inf)
        for name in ("queue_size", "daily_tokens", "max_tokens", "max_chars", "retries"):
            value, least = getattr(self, name), 0 if name == "retries" else 1
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ConfigError(f"judge.{name}: must be an integer >= {least}, got {value!r}")

    def __repr__(self) -> str:
        key = "None" if self.api_key is None else "<secret>"
        return (f"JudgeConfig(base_url={self.base_url!r}, model={self.model!r}, api_key={key}, "
                f"name={self.name!r}, ...)")

    def key(self) -> str | None:
        """The API key: ``api_key``, else the environment variable ``api_key_env`` (None: neither)."""
        return self.api_key if self.api_key is not None else os.environ.get(self.api_key_env) or None


def _number(name: str, value: object, low: float, high: float) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not low <= float(value) <= high:  # type: ignore[arg-type]
        raise ConfigError(f"judge.{name}: must be a number in [{low:g}, {high:g}], got {value!r}")
