"""Edge spool integrity: batch ids never repeat across spool damage (an epoch per open), a damaged spool is
moved aside and its loss counted for the server, and a full disk that will not record a delivery is
retried with backoff, one log line per state change, without sending the batch again."""

from __future__ import annotations

import errno
import logging
import os
import random
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from inferwatch.edge import Spool, SpoolBatch
from inferwatch.edge._uploader import Backoff, Outcome, Uploader
from inferwatch.model import Labels, Sample, SimulatedClock


def _samples(n: int, t0: float = 1000.0) -> list[Sample]:
    return [Sample(Labels.of("temp", device="d1"), t0 + i, float(i)) for i in range(n)]


def test_rows_numbered_again_after_damage_get_new_batch_ids(tmp_path: Path) -> None:
    # before: SQLite dropped the damaged WAL's frames, the agent numbered rows again from the same
    # point, its batch ids collided with delivered ones, the server answered "duplicate": data gone
    path = tmp_path / "spool.sqlite"
    sp = Spool(path)
    sp.append(_samples(10), now=1000.0)
    first = sp.next_batch(100)
    assert first is not None
    sp.ack(first)
    sp.close()
    with sqlite3.connect(path) as db:  # what the lost frames undid: the row counter
        db.execute("UPDATE meta SET value = '1' WHERE key = 'next_seq'")
    again = Spool(path)
    again.append(_samples(10, 2000.0), now=2000.0)
    second = again.next_batch(100)
    assert second is not None and (second.first, second.last) == (first.first, first.last)
    assert second.batch_id != first.batch_id and second.spool_id == first.spool_id
    again.close()


def test_a_batch_in_flight_at_a_crash_is_resent_under_its_id(tmp_path: Path) -> None:
    path = tmp_path / "spool.sqlite"
    sp = Spool(path)
    sp.append(_samples(5), now=1000.0)
    sent = sp.next_batch(100)
    sp.close()  # the agent died before the answer
    again = Spool(path)
    resent = again.next_batch(100)
    assert sent is not None and resent is not None and resent.batch_id == sent.batch_id
    again.close()


def test_a_damaged_spool_is_moved_aside_and_its_loss_counted(tmp_path: Path,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "spool.sqlite"
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))  # a header, then garbage
    with caplog.at_level(logging.WARNING):
        sp = Spool(path)
    assert sp.backlog() == 0 and sp.dropped()["damaged"] >= 1  # the agent reports it with the other drops
    assert len(list(tmp_path.glob("spool.sqlite.damaged-*"))) == 1
    assert sum("is damaged" in r.getMessage() for r in caplog.records) == 1
    sp.append(_samples(3), now=1000.0)
    assert sp.backlog() == 3
    sp.close()


class Recording:
    """A target that takes every batch."""

    name = "recording"

    def __init__(self) -> None:
        self.got: list[str] = []

    def send(self, batch: SpoolBatch, spool: Spool) -> tuple[Outcome, str]:
        self.got.append(batch.batch_id)
        return Outcome.OK, ""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "disk"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True,
                          check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {done.stderr.decode()[:100]}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(mnt: Path) -> Path:
    """Write until the filesystem is full (ENOSPC)."""
    filler = mnt / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


def test_a_full_disk_backs_off_quietly_and_records_the_delivery_when_space_returns(
        small_disk: Path, caplog: pytest.LogCaptureFixture) -> None:
    sp = Spool(small_disk / "spool.sqlite")
    sp.append(_samples(200), now=1000.0)
    target = Recording()
    up = Uploader(sp, target, clock=SimulatedClock(1000.0), backoff=Backoff(1.0, 300.0),
                  rng=random.Random(1))
    assert sp.next_batch(1000) is not None  # the in-flight mark is written while there is room
    filler = _fill(small_disk)
    with caplog.at_level(logging.INFO):
        waits = [up.step() for _ in range(6)]  # before: the same batch sent every second, a traceback each
        assert all(w > 0 for w in waits) and len(target.got) == 1  # delivered once, never resent
        assert sp.backlog() == 200  # not recorded yet: the disk is full
        filler.unlink()
        assert up.step() == 0.0
    assert sp.backlog() == 0 and len(target.got) == 1
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert sum("cannot be recorded" in m for m in lines) == 1 and sum("room again" in m for m in lines) == 1
    assert not any(r.exc_info for r in caplog.records)
    sp.close()
