"""Field types shared by the config sections: durations, secrets, frozen models."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainSerializer

from inferwatch.model import format_duration, parse_duration

__all__ = ["ByteSize", "Duration", "FrozenModel", "Secret", "http_url"]


class FrozenModel(BaseModel):
    """Base of every config model: immutable, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def _to_seconds(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("a duration, not a boolean")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError("a duration cannot be negative")
        return float(value)
    if isinstance(value, str):
        return parse_duration(value)
    raise ValueError("a duration such as 15s, 5m or 1h30m")


# Seconds as a float; written in YAML as "5m", "1h30m" or a number of seconds.
Duration = Annotated[
    float, BeforeValidator(_to_seconds), PlainSerializer(format_duration, return_type=str)
]


_UNITS = {"": 1, "B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40,
          "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40}


def _to_bytes(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("a size in bytes, not a boolean")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size cannot be negative")
        return value
    if isinstance(value, str):
        text = value.strip().upper()
        number = text.rstrip("KMGTIB")
        unit = text[len(number):]
        if number.isdigit() and unit in _UNITS:
            return int(number) * _UNITS[unit]
    raise ValueError(f"a size such as 10MB, 512KiB or a number of bytes, got {value!r}")


# Bytes as an int; written in YAML as a number or with a unit, as Prometheus's body_size_limit ("10MB").
ByteSize = Annotated[int, BeforeValidator(_to_bytes)]


class Secret:
    """A secret string (webhook key, token) that never prints.

    >>> s = Secret("abc"); str(s), repr(s), s.reveal()
    ('<secret>', '<secret>', 'abc')
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret itself; call only where it is sent, never where it is shown."""
        return self._value

    def __str__(self) -> str:
        return "<secret>"

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        def validate(value: Any) -> Secret:
            if isinstance(value, Secret):
                return value
            if not isinstance(value, str) or not value:
                raise ValueError("a non-empty string")
            return Secret(value)

        return core_schema.no_info_plain_validator_function(
            validate, serialization=core_schema.plain_serializer_function_ser_schema(str)
        )


def http_url(url: str, example: str) -> str:
    """``url`` when it is http(s) with a host; otherwise ``ValueError`` showing ``example`` (validators)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"an http:// or https:// URL with a host, such as {example}")
    return url
