"""Verbs that talk to a running server (its address and token from the config): silence, ack, history,
oncall, slo, generations; and the client they share."""

from inferwatch.cli._common import AddParser
from inferwatch.cli.client import _ack, _generations, _history, _oncall, _silence, _slo

__all__ = ["CLIENT_VERBS"]

CLIENT_VERBS: tuple[tuple[str, AddParser], ...] = (
    ("silence", _silence.add_parser),
    ("ack", _ack.add_parser),
    ("history", _history.add_parser),
    ("oncall", _oncall.add_parser),
    ("slo", _slo.add_parser),
    ("generations", _generations.add_parser),
)
"""These verbs and the functions adding their parsers, in ``--help``'s order."""
