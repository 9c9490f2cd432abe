"""Issue 46: a response's head and body leave in one write (one packet, one wake-up of the client)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from inferwatch.server._http_limits import _CORK_MAX, _Corked


class _Transport:
    """The transport calls the protocol makes, recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.calls.append(("write", data))

    def close(self) -> None:
        self.calls.append(("close", None))
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing

    def get_extra_info(self, name: str) -> str:
        return f"info {name}"


def _corked() -> tuple[_Transport, _Corked, asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    real = _Transport()
    return real, _Corked(cast(asyncio.Transport, real), loop), loop


def _turn(loop: asyncio.AbstractEventLoop) -> None:
    loop.run_until_complete(asyncio.sleep(0))


def test_writes_within_one_turn_leave_together() -> None:
    real, corked, loop = _corked()
    corked.write(b"HTTP/1.1 200 OK\r\n\r\n")
    corked.write(b'{"status":"success"}')
    assert real.calls == []  # nothing until the turn ends
    _turn(loop)
    assert real.calls == [("write", b'HTTP/1.1 200 OK\r\n\r\n{"status":"success"}')]
    corked.write(b"next")
    _turn(loop)
    assert real.calls[-1] == ("write", b"next")
    assert corked.get_extra_info("peername") == "info peername"  # the rest is the transport's
    loop.close()


def test_a_big_body_is_not_copied_and_keeps_its_order() -> None:
    real, corked, loop = _corked()
    big = b"x" * _CORK_MAX
    corked.write(b"head")
    corked.write(big)
    assert real.calls == [("write", b"head"), ("write", big)]
    assert real.calls[1][1] is big
    _turn(loop)
    assert len(real.calls) == 2
    loop.close()


def test_close_sends_what_waits_first_and_nothing_after() -> None:
    real, corked, loop = _corked()
    corked.write(b"HTTP/1.1 503 Service Unavailable\r\n\r\n")
    corked.close()
    _turn(loop)
    assert real.calls == [("write", b"HTTP/1.1 503 Service Unavailable\r\n\r\n"), ("close", None)]
    corked.write(b"late")
    _turn(loop)
    assert real.calls[-1] == ("close", None)  # the transport is closing: dropped, as asyncio drops it
    loop.close()
