"""Prometheus 2.42's head chunk bytes per sample, read from its own files (measured, not estimated).

    python benchmarks/prom_head_bytes.py TSDB_DIR

Prometheus keeps a series' newest samples in an open XOR chunk in memory and writes each chunk it
closes (120 samples, or at a block boundary) to ``chunks_head/`` (memory-mapped). Started with
``--enable-feature=memory-snapshot-on-shutdown`` it also writes every open chunk to a
``chunk_snapshot.*`` directory when it stops. Both are read here: the bytes of every head chunk
(the XOR stream, whose first two bytes count its samples), and the closed chunks' framing in
their file (series ref, min and max time, encoding, length, CRC: ~30 bytes a chunk). Not
counted: the per-series memory (``memSeries``, labels, postings) and Go's slice room.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import cramjam

__all__ = ["HeadChunks", "read_head_chunks"]

_PAGE = 32 * 1024


@dataclass
class HeadChunks:
    """What Prometheus's head chunks hold: samples, chunks and bytes, closed and open apart."""

    samples: int = 0
    chunks: int = 0
    data_bytes: int = 0
    """The chunks' XOR streams."""
    framing_bytes: int = 0
    """The closed chunks' headers and CRCs in ``chunks_head/``."""
    open_chunks: int = 0
    open_samples: int = 0

    def per_sample(self) -> float:
        """Bytes a sample: the chunks' data and the closed ones' framing."""
        return (self.data_bytes + self.framing_bytes) / self.samples if self.samples else float("nan")


def _uvarint(b: bytes, i: int) -> tuple[int, int]:
    x = shift = 0
    while True:
        c = b[i]
        i += 1
        x |= (c & 0x7F) << shift
        if c < 0x80:
            return x, i
        shift += 7


def _closed(path: Path, out: HeadChunks) -> None:
    """One ``chunks_head`` file: an 8-byte header, then ref(8) mint(8) maxt(8) encoding(1) len data crc(4)."""
    b = path.read_bytes()
    i = 8
    while i + 26 <= len(b) and b[i + 24] != 0:  # encoding 0: nothing more was written
        size, j = _uvarint(b, i + 25)
        if j + size + 4 > len(b):
            break
        out.samples += int.from_bytes(b[j:j + 2], "big")
        out.chunks += 1
        out.data_bytes += size
        out.framing_bytes += j - i + 4
        i = j + size + 4


def _records(segment: bytes) -> list[bytes]:
    """The records of one write-ahead-log segment (32 KiB pages of fragments, snappy when flagged)."""
    out: list[bytes] = []
    parts: list[bytes] = []
    i = 0
    while i + 7 <= len(segment):
        kind = segment[i]
        if kind & 7 == 0:  # the rest of the page is padding
            i = (i // _PAGE + 1) * _PAGE
            continue
        size = int.from_bytes(segment[i + 1:i + 3], "big")
        parts.append(segment[i + 7:i + 7 + size])
        i += 7 + size
        if kind & 7 in (1, 4):  # full, or the last fragment
            rec = b"".join(parts)
            parts = []
            out.append(bytes(cramjam.snappy.decompress_raw(rec)) if kind & 8 else rec)
    return out


def _open(snapshot: Path, out: HeadChunks) -> None:
    """A chunk snapshot's series records: ref, labels, an unused int64, then the open chunk if any."""
    for seg in sorted(snapshot.iterdir()):
        for rec in _records(seg.read_bytes()):
            if not rec or rec[0] != 1:
                continue
            n, i = _uvarint(rec, 9)
            for _ in range(2 * n):
                size, i = _uvarint(rec, i)
                i += size
            has, i = _uvarint(rec, i + 8)
            if not has:
                continue
            size, i = _uvarint(rec, i + 17)  # min and max time, the encoding
            samples = int.from_bytes(rec[i:i + 2], "big")
            out.samples += samples
            out.chunks += 1
            out.data_bytes += size
            out.open_chunks += 1
            out.open_samples += samples


def read_head_chunks(tsdb: Path) -> HeadChunks:
    """The head chunks of a stopped Prometheus's data directory ``tsdb``."""
    out = HeadChunks()
    heads = tsdb / "chunks_head"
    for f in sorted(heads.iterdir()) if heads.is_dir() else []:
        _closed(f, out)
    snapshots = sorted(tsdb.glob("chunk_snapshot.*"))
    if snapshots:
        _open(snapshots[-1], out)
    return out


if __name__ == "__main__":
    got = read_head_chunks(Path(sys.argv[1]))
    print(f"{got.per_sample():.2f} B a sample: {got.samples:,} samples in {got.chunks:,} chunks "
          f"({got.open_chunks:,} open with {got.open_samples:,} samples), {got.data_bytes:,} B of XOR data, "
          f"{got.framing_bytes:,} B of closed-chunk framing")
