"""Fixtures of the edge stories that run the agent as a process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .helpers import sequence_app


@pytest.fixture
def app() -> Iterator[str]:
    """The device's application (:func:`~edge.helpers.sequence_app`)."""
    with sequence_app() as url:
        yield url
