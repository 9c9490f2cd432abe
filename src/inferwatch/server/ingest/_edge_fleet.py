"""The fleet of edge devices as one table: ``GET /api/v1/edge/fleet``, sorted, filtered and paged here.

One row per device (configured or heard from): its last contact and silence, the
backlog behind its last batch, what its agent reports of itself (version, labels
such as ``site``, the applied configuration's hash, upload errors) and the clock
offset read at its last batch (the server's clock minus the agent's). The server
sorts, filters and pages, so a page of 50 rows of a 5,000-device fleet is all the
browser gets.

``filter`` is words, all of which a row must match: ``key=value`` a label or a
column exactly (``site=berlin``, ``version=0.1.0``), ``key!=value`` not, a bare
word part of the device's name or of any label value. ``sort`` is a column or
``labels.<name>``; ``order`` ``asc`` or ``desc``; ``page`` from 1, ``per_page`` at
most :data:`MAX_PER_PAGE`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from inferwatch._exceptions import InputError

__all__ = ["COLUMNS", "MAX_PER_PAGE", "fleet_rows", "fleet_view", "parse_fleet_query"]

COLUMNS = ("device", "last_contact", "silence_s", "backlog", "dropped", "version", "config_hash",
           "config_error", "clock_offset_s", "errors", "last_error", "samples", "batches")
MAX_PER_PAGE = 500


def fleet_rows(statuses: Iterable[Mapping[str, Any]], configured: Iterable[str], now: float,
               started: float) -> list[dict[str, Any]]:
    """A row per device: ``statuses`` are the ``vars`` of each ``DeviceStatus``; a configured device
    never heard from is silent since ``started``."""
    rows: dict[str, dict[str, Any]] = {}
    for name in configured:
        rows[name] = _row({"device": name}, now, started)
    for st in statuses:
        rows[str(st.get("device", ""))] = _row(st, now, started)
    return list(rows.values())


def _row(st: Mapping[str, Any], now: float, started: float) -> dict[str, Any]:
    last = float(st.get("last_contact") or 0.0)
    dropped = st.get("dropped") or {}
    return {"device": str(st.get("device", "")), "last_contact": last or None,
            "silence_s": round(max(0.0, now - (last or started)), 3), "backlog": int(st.get("backlog") or 0),
            "dropped": sum(int(v) for v in dropped.values()), "dropped_by_reason": dict(dropped),
            "version": str(st.get("version") or ""), "labels": dict(st.get("labels") or {}),
            "config_hash": str(st.get("config_hash") or ""),
            "config_error": str(st.get("config_error") or ""),
            "clock_offset_s": float(st.get("clock_offset_s") or 0.0), "errors": int(st.get("errors") or 0),
            "last_error": str(st.get("last_error") or ""), "samples": int(st.get("samples") or 0),
            "batches": int(st.get("batches") or 0), "heard": bool(last)}


def parse_fleet_query(params: Mapping[str, str]) -> dict[str, Any]:
    """The query's ``sort``, ``order``, ``filter``, ``page``, ``per_page``; :class:`InputError` names
    the parameter that does not read."""
    sort = params.get("sort", "device")
    if sort not in COLUMNS and not (sort.startswith("labels.") and len(sort) > 7):
        raise InputError(f"sort: {sort!r:.60} is not a column ({', '.join(COLUMNS)}) nor labels.<name>")
    order = params.get("order", "asc")
    if order not in ("asc", "desc"):
        raise InputError(f"order: {order!r:.20} is neither asc nor desc")
    return {"sort": sort, "order": order, "filter": params.get("filter", "")[:500],
            "page": _int(params, "page", 1, 1, 10**6),
            "per_page": _int(params, "per_page", 50, 1, MAX_PER_PAGE)}


def _int(params: Mapping[str, str], key: str, default: int, low: int, high: int) -> int:
    text = params.get(key)
    if text is None or text == "":
        return default
    try:
        got = int(text)
    except ValueError:
        raise InputError(f"{key}: {text!r:.20} is not a whole number") from None
    if not low <= got <= high:
        raise InputError(f"{key}: {got} is not from {low} to {high}")
    return got


def fleet_view(rows: list[dict[str, Any]], *, sort: str = "device", order: str = "asc", filter: str = "",
               page: int = 1, per_page: int = 50) -> dict[str, Any]:
    """The page of ``rows`` the query asks for, with the totals (see the module docstring)."""
    terms = filter.split()
    kept = [r for r in rows if all(_matches(r, t) for t in terms)]
    kept.sort(key=lambda r: r["device"])
    kept.sort(key=lambda r: _key(r, sort), reverse=order == "desc")
    pages = max(1, math.ceil(len(kept) / per_page))
    start = (page - 1) * per_page
    return {"rows": kept[start:start + per_page], "total": len(kept), "devices": len(rows), "page": page,
            "per_page": per_page, "pages": pages, "sort": sort, "order": order, "filter": filter}


def _key(row: dict[str, Any], sort: str) -> tuple[int, Any]:
    value = row["labels"].get(sort[7:]) if sort.startswith("labels.") else row.get(sort)
    if value is None or value == "":
        return (1, "")  # what a row lacks sorts last (asc) or first (desc)
    return (0, value)


def _matches(row: dict[str, Any], term: str) -> bool:
    negate = "!=" in term
    key, sep, want = term.partition("!=" if negate else "=")
    if not sep:
        low = term.lower()
        return low in row["device"].lower() or any(low in str(v).lower() for v in row["labels"].values())
    have = row["labels"].get(key, row.get(key) if key in COLUMNS else None)
    same = have is not None and str(have) == want
    return not same if negate else same
