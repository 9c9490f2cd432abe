"""Silences: matchers muting alerts between a start and an end, kept in SQLite.

Shaped like Alertmanager's: ``created_by`` and ``comment`` are required, a
silence is *pending* before ``starts_at``, *active* until ``ends_at`` and
*expired* after; expiring early sets ``ends_at`` to now.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from inferwatch._exceptions import InputError
from inferwatch.alerting._state import StateStore
from inferwatch.model import Matcher, MatchOp, matches_all, parse_matchers, readable

__all__ = ["Silence", "Silences"]


@dataclass(frozen=True, slots=True)
class Silence:
    """One silence."""

    id: str
    matchers: tuple[Matcher, ...]
    starts_at: float
    ends_at: float
    created_by: str
    comment: str
    updated_at: float = 0.0

    def state(self, now: float) -> str:
        """``pending``, ``active`` or ``expired`` at ``now``."""
        if now < self.starts_at:
            return "pending"
        return "active" if now < self.ends_at else "expired"

    def mutes(self, labels: Mapping[str, str], now: float) -> bool:
        """Whether this silence is active and matches ``labels``."""
        return self.state(now) == "active" and matches_all(self.matchers, labels)

    @classmethod
    def new(
        cls, matchers: str | Sequence[str] | Sequence[Matcher], starts_at: float, ends_at: float,
        created_by: str, comment: str, id: str = "",
    ) -> Silence:
        """Validate and build (``InputError`` naming the bad field)."""
        try:
            ms = _as_matchers(matchers)
        except ValueError as exc:
            raise InputError(f"silence matchers: {exc}") from None
        if not ms:
            raise InputError("silence matchers: at least one matcher is needed")
        if all(m.matches("") for m in ms):
            raise InputError("silence matchers: at least one must not match the empty string")
        if not created_by.strip():
            raise InputError("silence createdBy: must not be empty")
        if not comment.strip():
            raise InputError("silence comment: must not be empty")
        if ends_at <= starts_at:
            raise InputError(f"silence endsAt ({ends_at}) must be after startsAt ({starts_at})")
        return cls(id or str(uuid.uuid4()), ms, starts_at, ends_at, created_by, comment)


def _as_matchers(value: str | Sequence[str] | Sequence[Matcher]) -> tuple[Matcher, ...]:
    if isinstance(value, str):
        return parse_matchers(value)
    out: list[Matcher] = []
    for item in value:
        out.extend([item] if isinstance(item, Matcher) else parse_matchers(item))
    return tuple(out)


class Silences:
    """The silence store and muter; every change is written through to SQLite."""

    def __init__(self, db: StateStore) -> None:
        self._db = db
        self._cache: dict[str, Silence] = {}
        self.reload()

    def reload(self) -> None:
        """Read every silence again (an HA peer may have written some): swapped in at once."""
        cache: dict[str, Silence] = {}
        for row in self._db.query("SELECT id, matchers, starts_at, ends_at, created_by, comment, updated_at "
                                  "FROM silences"):
            sid, ms, s, e, by, comment, upd = row
            matchers = tuple(Matcher(m[0], MatchOp(m[1]), m[2]) for m in readable(json.loads(str(ms))))
            cache[str(sid)] = Silence(str(sid), matchers, float(str(s)), float(str(e)),
                                      str(by), str(comment), float(str(upd)))
        self._cache = cache

    def add(self, silence: Silence, now: float) -> Silence:
        """Create, or update the silence with the same id (an expired one cannot change)."""
        old = self._cache.get(silence.id)
        if old is not None and old.state(now) == "expired":
            raise InputError(f"silence {silence.id} has expired and cannot be updated")
        stored = replace(silence, updated_at=now)
        self._write(stored)
        return stored

    def expire(self, silence_id: str, now: float) -> Silence:
        """End a silence now (``InputError`` if unknown or already expired)."""
        old = self._cache.get(silence_id)
        if old is None:
            raise InputError(f"no silence with id {silence_id!r}")
        if old.state(now) == "expired":
            raise InputError(f"silence {silence_id} has already expired")
        stored = replace(old, ends_at=now if old.state(now) == "active" else old.starts_at,
                         updated_at=now)
        self._write(stored)
        return stored

    def _write(self, s: Silence) -> None:
        ms = json.dumps([[m.name, m.op.value, m.value] for m in s.matchers])
        with self._db.transaction() as c:
            c.execute("INSERT OR REPLACE INTO silences VALUES (?,?,?,?,?,?,?)",
                      (s.id, ms, s.starts_at, s.ends_at, s.created_by, s.comment, s.updated_at))
        self._cache[s.id] = s

    def get(self, silence_id: str) -> Silence | None:
        """The silence with this id, if any."""
        return self._cache.get(silence_id)

    def list(self) -> list[Silence]:
        """Every silence, newest first."""
        return sorted(self._cache.values(), key=lambda s: (-s.updated_at, s.id))

    def set(self, silence: Silence, now: float) -> Silence:
        """Create or update as Alertmanager's ``Silences.Set`` does (the caller answers 404 for an
        id it was asked to update and that is not here: here an unknown id is a new silence).

        A change that would rewrite history (other matchers, an active silence's start, a
        pending one's start in the past, an expired silence) expires the old silence and
        creates a new one with a new id; a new silence starting in the past starts now.
        """
        prev = self._cache.get(silence.id)
        if prev is not None and _can_update(prev, silence, now):
            return self.add(silence, now)
        if prev is not None and prev.state(now) != "expired":
            self.expire(prev.id, now)
        new_id = str(uuid.uuid4()) if prev is not None else silence.id
        return self.add(replace(silence, id=new_id, starts_at=max(silence.starts_at, now)), now)

    def silenced_by(self, labels: Mapping[str, str], now: float) -> tuple[str, ...]:
        """The ids of the active silences that match ``labels``, sorted."""
        return tuple(sorted(s.id for s in self._cache.values() if s.mutes(labels, now)))

    def active(self, now: float) -> tuple[Silence, ...]:
        """The silences active at ``now`` (a snapshot: matching many alerts checks only these)."""
        return tuple(s for s in tuple(self._cache.values()) if s.state(now) == "active")

    def mutes(self, labels: Mapping[str, str], now: float) -> bool:
        """Whether any active silence matches ``labels``."""
        return any(s.mutes(labels, now) for s in self._cache.values())


def _can_update(a: Silence, b: Silence, now: float) -> bool:
    # Alertmanager's canUpdate: an update must not change what was silenced in the past.
    if a.matchers != b.matchers:
        return False
    state = a.state(now)
    if state == "active":
        return int(a.starts_at) == int(b.starts_at) and b.ends_at >= now
    return state == "pending" and b.starts_at >= now
