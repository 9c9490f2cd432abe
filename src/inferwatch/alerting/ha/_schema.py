"""The shared state's schema in PostgreSQL, versioned, and the stores' SQL said in its dialect.

The stores write portable SQL for SQLite (``?`` parameters, ``INSERT OR REPLACE``,
``INSERT OR IGNORE``, ``lastrowid``); :func:`translate` says the same in PostgreSQL, so
the stores' logic is one. The schema is owned here: ``MIGRATIONS[i]`` takes version
``i`` to ``i + 1``; a replica applies what is missing at start, under an advisory lock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["MIGRATIONS", "SCHEMA_LOCK", "TABLES", "Statement", "translate"]

SCHEMA_LOCK = 0x1F_A1E7  # pg_advisory_xact_lock key: one replica migrates at a time

# table -> (primary key, columns in order, serial column or "")
TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    "silences": (("id",), ("id", "matchers", "starts_at", "ends_at", "created_by", "comment",
                           "updated_at"), ""),
    "nflog": (("receiver", "group_key"), ("receiver", "group_key", "firing", "resolved", "sent_at"), ""),
    "alerts": (("fingerprint",), ("fingerprint", "body", "updated_at"), ""),
    "actions": (("action", "fingerprint", "episode", "phase"),
                ("action", "fingerprint", "episode", "alertname", "labels", "phase", "outcome", "ok",
                 "t"), ""),
    "digest": (("receiver", "fingerprint"), ("receiver", "fingerprint", "body", "first_seen",
                                              "last_seen"), ""),
    "meta": (("key",), ("key", "value"), ""),
    "notifications": (("id",), ("id", "t", "receiver", "body"), "id"),
    "outbox": (("seq",), ("seq", "id", "receiver", "key", "body", "attempts", "due", "created",
                          "error"), "seq"),
    "group_episodes": (("group_key",), ("group_key", "episode", "started"), ""),
    "history": (("id",), ("id", "t", "kind", "group_id", "fingerprint", "labels", "detail"), "id"),
    "acks": (("group_key",), ("group_key", '"by"', "comment", "at", "expires_at"), ""),
    "escalations": (("group_key",), ("group_key", "policy", "started", "sent", "notified"), ""),
}

_V1 = """
CREATE TABLE silences (id TEXT PRIMARY KEY, matchers TEXT NOT NULL, starts_at FLOAT8 NOT NULL,
  ends_at FLOAT8 NOT NULL, created_by TEXT NOT NULL, comment TEXT NOT NULL,
  updated_at FLOAT8 NOT NULL);
CREATE TABLE nflog (receiver TEXT NOT NULL, group_key TEXT NOT NULL, firing TEXT NOT NULL,
  resolved TEXT NOT NULL, sent_at FLOAT8 NOT NULL, PRIMARY KEY (receiver, group_key));
CREATE TABLE alerts (fingerprint TEXT PRIMARY KEY, body TEXT NOT NULL, updated_at FLOAT8 NOT NULL);
CREATE TABLE actions (action TEXT NOT NULL, fingerprint TEXT NOT NULL, episode FLOAT8 NOT NULL,
  alertname TEXT NOT NULL, labels TEXT NOT NULL, phase TEXT NOT NULL, outcome TEXT NOT NULL,
  ok INTEGER NOT NULL, t FLOAT8 NOT NULL, PRIMARY KEY (action, fingerprint, episode, phase));
CREATE TABLE digest (receiver TEXT NOT NULL, fingerprint TEXT NOT NULL, body TEXT NOT NULL,
  first_seen FLOAT8 NOT NULL, last_seen FLOAT8 NOT NULL, PRIMARY KEY (receiver, fingerprint));
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE notifications (id BIGSERIAL PRIMARY KEY, t FLOAT8 NOT NULL, receiver TEXT NOT NULL,
  body TEXT NOT NULL);
CREATE TABLE outbox (seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL, receiver TEXT NOT NULL, key TEXT NOT NULL,
  body TEXT NOT NULL, attempts INTEGER NOT NULL, due FLOAT8 NOT NULL, created FLOAT8 NOT NULL,
  error TEXT NOT NULL);
CREATE TABLE group_episodes (group_key TEXT PRIMARY KEY, episode TEXT NOT NULL, started FLOAT8 NOT NULL);
CREATE TABLE history (id BIGSERIAL PRIMARY KEY, t FLOAT8 NOT NULL, kind TEXT NOT NULL,
  group_id TEXT NOT NULL, fingerprint TEXT NOT NULL, labels TEXT NOT NULL, detail TEXT NOT NULL);
CREATE INDEX history_t ON history (t);
CREATE TABLE acks (group_key TEXT PRIMARY KEY, "by" TEXT NOT NULL, comment TEXT NOT NULL,
  at FLOAT8 NOT NULL, expires_at FLOAT8);
CREATE TABLE escalations (group_key TEXT PRIMARY KEY, policy TEXT NOT NULL, started FLOAT8 NOT NULL,
  sent TEXT NOT NULL, notified TEXT NOT NULL);
CREATE TABLE lease (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires FLOAT8 NOT NULL);
CREATE TABLE replicas (name TEXT PRIMARY KEY, address TEXT NOT NULL, seen FLOAT8 NOT NULL,
  started FLOAT8 NOT NULL)
"""

_V2 = """
ALTER TABLE lease ADD COLUMN beat BIGINT NOT NULL DEFAULT 0;
CREATE TABLE outcomes (seq BIGINT PRIMARY KEY, request_id TEXT NOT NULL, label TEXT NOT NULL,
  model TEXT NOT NULL, time FLOAT8, received FLOAT8 NOT NULL);
CREATE UNIQUE INDEX outcomes_id ON outcomes (request_id, model);
CREATE INDEX outcomes_received ON outcomes (received);
CREATE TABLE outcomes_meta (one INTEGER PRIMARY KEY CHECK (one = 1), epoch TEXT NOT NULL,
  last BIGINT NOT NULL, kept BIGINT NOT NULL);
INSERT INTO outcomes_meta VALUES (1, md5(random()::text || clock_timestamp()::text), 0, 0);
CREATE TABLE edge_devices (device TEXT PRIMARY KEY, status TEXT NOT NULL, last_contact FLOAT8 NOT NULL)
"""
"""Version 2: the lease's renewal counter (expiry judged without comparing clocks), delayed labels
(numbered under the counter row's lock, so in commit order), the edge device registry."""

MIGRATIONS: tuple[str, ...] = (_V1, _V2)
"""``MIGRATIONS[i]`` takes the schema from version ``i`` to ``i + 1`` (append, never edit)."""


@dataclass(frozen=True, slots=True)
class Statement:
    """A store's statement in PostgreSQL; ``returning``: the serial column a single insert returns."""

    sql: str
    returning: str = ""
    skip: bool = False
    """A store's own ``CREATE``: the schema above already has it."""


_UPSERT = re.compile(r"^\s*INSERT OR (REPLACE|IGNORE) INTO (\w+)\s*", re.IGNORECASE)
_INSERT = re.compile(r"^\s*INSERT INTO (\w+)", re.IGNORECASE)


@lru_cache(maxsize=256)
def translate(sql: str) -> Statement:
    """``sql`` (SQLite, as the stores write it) in PostgreSQL.

    >>> translate("INSERT OR REPLACE INTO meta VALUES (?,?)").sql
    'INSERT INTO meta VALUES (%s,%s) ON CONFLICT (key) DO UPDATE SET value=EXCLUDED.value'
    >>> translate("INSERT INTO outbox (id) VALUES (?)").returning
    'seq'
    """
    if sql.lstrip().upper().startswith("CREATE"):
        return Statement("", skip=True)
    out = sql.replace("?", "%s").replace(", by,", ', "by",')
    out = re.sub(r"\browid\b", "ctid", out)
    m = _UPSERT.match(out)
    if m is not None:
        table = m.group(2)
        keys, cols, _ = TABLES[table]
        out = f"INSERT INTO {table} " + out[m.end():]
        if m.group(1).upper() == "IGNORE":
            return Statement(out + " ON CONFLICT DO NOTHING")
        sets = ", ".join(f"{c}=EXCLUDED.{c}" for c in cols if c not in keys)
        return Statement(out + f" ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {sets}")
    m = _INSERT.match(out)
    if m is not None and TABLES.get(m.group(1), ((), (), ""))[2]:
        serial = TABLES[m.group(1)][2]
        return Statement(out + f" RETURNING {serial}", returning=serial)
    return Statement(out)
