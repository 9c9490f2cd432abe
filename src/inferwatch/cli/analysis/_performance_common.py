"""What the classifier and regressor paths of ``performance estimate`` share: the id column, the table."""

from __future__ import annotations

from typing import Any

__all__ = ["id_column", "print_table"]


def id_column(table: Any, column: str, where: str) -> Any:
    """The ``--id-col`` column of a table (a clear error naming the file when absent)."""
    from inferwatch._exceptions import InputError

    if column not in table:
        raise InputError(f"{where}: no column named {column!r} (the --id-col)")
    return table[column]


def print_table(chunks: list[Any], metrics: list[str], digits: int = 3) -> None:
    """Estimate [band] (realized) per chunk and metric, one line per chunk."""
    width = 22 if digits == 3 else 30
    head = f"{'chunk':>5} {'rows':>13}  " + "  ".join(f"{m:>{width}}" for m in metrics)
    print(head)
    for c in chunks:
        cells = []
        for m in metrics:
            v, lo, hi = c.estimate.estimated[m], c.estimate.lower[m], c.estimate.upper[m]
            real = "" if c.realized is None else f" ({c.realized[m]:.{digits}f})"
            cells.append(f"{v:.{digits}f} [{lo:.{digits}f},{hi:.{digits}f}]{real}".rjust(width))
        print(f"{c.index:>5} {f'{c.start}-{c.end}':>13}  " + "  ".join(cells))
