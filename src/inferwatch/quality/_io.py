"""Reading CSV and Parquet files into columns (numpy), without pandas.

CSV is parsed by ``pyarrow.csv`` (multi-threaded) when pyarrow is installed,
else by the standard library's ``csv`` module (slower, same result). Parquet
needs pyarrow (``pip install 'inferwatch[parquet]'``). Numeric columns become
float64 with NaN for missing values; any other column becomes a categorical
column of ``str`` with ``None`` for missing values; ``categorical`` forces
named numeric columns to categorical.
"""

from __future__ import annotations

import csv
import importlib.util
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from inferwatch._exceptions import InputError, ToolMissingError
from inferwatch.quality.profile import Column, as_categorical

__all__ = ["read_table"]

_PARQUET = (".parquet", ".pq")


def read_table(path: str | Path, *, categorical: Sequence[str] = ()) -> dict[str, Column]:
    """Columns of a CSV or Parquet file, in file order (``InputError`` naming the file)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file")
    has_arrow = importlib.util.find_spec("pyarrow") is not None
    if p.suffix.lower() not in _PARQUET and _binary(p):
        raise InputError(f"{p}: not a CSV text file (it holds binary data)")
    if p.suffix.lower() in _PARQUET:
        if not has_arrow:
            raise ToolMissingError(f"{p}: reading Parquet needs pyarrow: pip install 'inferwatch[parquet]'")
        table = _read_arrow(p, parquet=True)
    else:
        table = _read_arrow(p, parquet=False) if has_arrow else _read_csv_stdlib(p)
    if not table:
        raise InputError(f"{p}: no columns")
    unknown = [c for c in categorical if c not in table]
    if unknown:
        raise InputError(f"{p}: no column named {', '.join(map(repr, unknown))}")
    for name in categorical:
        table[name] = as_categorical(table[name])
    return table


def _binary(p: Path) -> bool:
    try:
        with p.open("rb") as fh:
            head = fh.read(8192)
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from exc
    return b"\0" in head


def _read_arrow(p: Path, *, parquet: bool) -> dict[str, Column]:
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        if parquet:
            import pyarrow.parquet as pq

            t = pq.read_table(p)
        else:
            import pyarrow.csv as pcsv

            t = pcsv.read_csv(p, convert_options=pcsv.ConvertOptions(strings_can_be_null=True))
    except (pa.ArrowInvalid, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{p}: cannot read: {first[:200]}") from exc
    out: dict[str, Column] = {}
    for name, chunked in zip(t.column_names, t.columns, strict=True):
        typ = chunked.type
        if pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_decimal(typ):
            out[name] = pc.cast(chunked, pa.float64()).to_numpy(zero_copy_only=False).astype(np.float64)
        else:
            values = pc.cast(chunked, pa.string()).to_pylist()
            out[name] = np.asarray(values, dtype=object)
    return out


def _read_csv_stdlib(p: Path) -> dict[str, Column]:
    try:
        with p.open(newline="") as fh:
            rows = list(csv.reader(fh))
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError:
        raise InputError(f"{p}: not a UTF-8 text file") from None
    except csv.Error as exc:
        raise InputError(f"{p}: not a CSV file: {exc}") from None
    if not rows:
        raise InputError(f"{p}: empty file")
    header, body = rows[0], rows[1:]
    bad = next((i for i, r in enumerate(body, start=2) if len(r) != len(header)), None)
    if bad is not None:
        raise InputError(f"{p}: line {bad}: expected {len(header)} fields")
    return {name: _parse_column([r[j] for r in body]) for j, name in enumerate(header)}


def _parse_column(cells: list[str]) -> Column:
    try:
        return np.array([float(c) if c.strip() else math.nan for c in cells], dtype=np.float64)
    except ValueError:
        values: list[Any] = [c if c != "" else None for c in cells]
        return np.asarray(values, dtype=object)
