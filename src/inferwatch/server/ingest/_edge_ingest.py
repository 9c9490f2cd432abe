"""``POST /api/v1/edge/ingest``: edge devices' batches into the store, each batch stored once.

Checks, in order, each answered with a JSON error naming what was wrong:
413 a body over ``edge.max_body_bytes`` (4 MiB); 401 no or an unknown device token;
400 a body that is not gzip'ed JSON of the ingest format (the message names
the field, e.g. ``body.series[3].v[17]``) or that expands past
``edge.max_decoded_bytes`` or holds more than ``edge.max_samples``; 403 a
token of one device uploading as another; 400 a sample stamped more than 10 minutes
ahead of the server's clock or before 2000, or a batch over a limit of ``server.limits``
(labels, label lengths, series: the message names it), nothing of the batch stored;
409 ``unknown_series`` a version-2 batch naming a series id whose labels the server
does not have (the agent resends it with its definitions). Both versions are accepted (``_wire``);
version-2 definitions are kept per device and spool in ``edge.sqlite``. A batch id already stored answers
200 ``{"status": "duplicate"}`` and stores nothing (the agent retried a batch
whose answer it did not get). Every sample gets ``device="<name>"`` from
the token, never from the body; a version-3 batch's gaps between sent points are
filled in at the device's step (``_edge_fill``); the server records the contact time as
``inferwatch_edge_last_contact_timestamp_seconds{device}``. Concurrent uploads are written together
(``_edge_commit``: one store append, one transaction of batch ids), each answered only once committed;
an upload of a batch id still being written answers 429 (the agent sends it again).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from inferwatch._exceptions import InputError, StoreError
from inferwatch.alerting.ha import SharedDevices
from inferwatch.collect import sample
from inferwatch.config import EdgeConfig
from inferwatch.edge import INGEST_PATH, AgentStats, UnknownSeries, decode_batch
from inferwatch.model import Clock, Sample, is_valid_label_name
from inferwatch.model import metrics as m
from inferwatch.server.ingest._edge_commit import GroupCommit
from inferwatch.server.ingest._edge_config import AgentConfigs
from inferwatch.server.ingest._edge_fill import Filler
from inferwatch.server.ingest._edge_fleet import fleet_rows, fleet_view, parse_fleet_query
from inferwatch.server.ingest._edge_seen import SeenBatches
from inferwatch.server.ingest._ingest_checks import check_batch
from inferwatch.store import Store

__all__ = ["EDGE_STATE_FILE", "DeviceStatus", "EdgeIngest", "SeenBatches", "ingest_routes"]

log = logging.getLogger(__name__)
EDGE_STATE_FILE = "edge.sqlite"


@dataclass
class DeviceStatus:
    """What the server knows of one device (the dashboard and ``/api/v1/edge/devices`` show it)."""

    device: str
    last_contact: float = 0.0
    backlog: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    heartbeat_s: float = 0.0
    samples: int = 0
    batches: int = 0
    duplicates: int = 0
    version: str = ""  # what the agent last reported of itself (the fleet page)
    labels: dict[str, str] = field(default_factory=dict)
    config_hash: str = ""
    config_error: str = ""
    clock_offset_s: float = 0.0  # the server's clock minus the agent's, at its last batch
    errors: int = 0
    last_error: str = ""


def _restored(rows: list[dict[str, Any]]) -> dict[str, DeviceStatus]:
    known = set(DeviceStatus.__dataclass_fields__)
    out = {}
    for row in rows:
        try:
            status = DeviceStatus(**{k: v for k, v in row.items() if k in known})
        except TypeError:  # no device name: nothing to restore
            continue
        out[status.device] = status
    return out


def _agent_said(status: DeviceStatus, agent: AgentStats, now: float) -> None:
    """What the agent reports of itself (an older agent reports none of it: kept as it was)."""
    if agent.version:
        status.version = agent.version
        status.labels = {k: v for k, v in agent.labels.items()
                         if is_valid_label_name(k) and not k.startswith("__") and k != "device"}
        status.config_hash, status.config_error = agent.config_hash, agent.config_error
        status.errors = agent.errors
        status.last_error = agent.last_error
    if agent.sent_at:
        status.clock_offset_s = round(now - agent.sent_at, 3)


class _Reject(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class _Upload:
    """One upload waiting for its group commit."""

    device: str
    batch_id: str
    now: float
    status: DeviceStatus
    samples: list[Sample]
    received: int
    duplicate: bool = False


class EdgeIngest:
    """Validates, authenticates and stores edge batches (see the module docstring)."""

    def __init__(self, config: EdgeConfig, store: Store, clock: Clock, data_dir: Path | None) -> None:
        self.config, self.store, self.clock = config, store, clock
        self.retention: float | None = None  # ``storage.retention`` (serve): older samples are out of bounds
        self.seen = SeenBatches(data_dir / EDGE_STATE_FILE if data_dir else None)
        self.devices: dict[str, DeviceStatus] = _restored(self.seen.load_devices())
        """Per device, since it first uploaded (kept in ``edge.sqlite``: a restart continues them)."""
        self.filler = Filler()
        self.agent_configs = AgentConfigs(config.agent_configs)
        self._by_digest = {hashlib.sha256(t.reveal().encode()).digest(): name
                           for name, t in config.devices.items()}
        self._lock = threading.Lock()
        self._commits: GroupCommit[_Upload] = GroupCommit(self._write)
        self._writing: set[tuple[str, str]] = set()  # (device, batch id) waiting for its group commit
        self.shared: SharedDevices | None = None
        """An HA pair's device registry: each ``watch`` round writes the devices heard from since and
        reads those the peer heard from more recently."""
        self._dirty: set[str] = set()  # devices heard from since the last round wrote them there
        self._shared_down = False
        self._started = clock.now()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, now: float) -> int:
        """Write each device's silence and heartbeat (what ``EdgeDeviceOffline`` compares); returns devices.

        A configured device never heard from counts its silence from the server's start.
        """
        self.sync()
        with self._lock:
            names = sorted(set(self.config.devices) | set(self.devices))
            out: list[Sample] = []
            for name in names:
                st = self.devices.get(name)
                since = st.last_contact if st else self._started
                beat = st.heartbeat_s if st and st.heartbeat_s else self.config.heartbeat
                # the site its agent reports (none: ""): DeviceSilent counts the silent ones by site
                labels = {"device": name, "site": st.labels.get("site", "") if st else ""}
                out += [sample(m.EDGE_DEVICE_SILENCE, now, max(0.0, now - since), labels),
                        sample(m.EDGE_DEVICE_HEARTBEAT, now, beat, labels)]
        self.store.append(out)  # outside the lock: a fleet's 10,000 samples never hold up its uploads
        return len(names)

    def sync(self) -> None:
        """An HA pair: write the devices heard from since the last round to the shared registry and take
        what the peer heard more recently (its counts of what it stored stay its own); while the
        database is gone, go on with what this replica knows and try again next round."""
        if self.shared is None:
            return
        with self._lock:
            changed = [(n, json.dumps(vars(self.devices[n])), self.devices[n].last_contact)
                       for n in self._dirty]
            known = {n: st.last_contact for n, st in self.devices.items()}
            self._dirty.clear()
        try:
            got = self.shared.sync(changed, known)
        except StoreError as exc:
            with self._lock:
                self._dirty.update(n for n, _, _ in changed)
            if not self._shared_down:
                log.error("edge devices: the pair's registry is out of reach (%s); going on with this "
                          "replica's own", exc)
            self._shared_down = True
            return
        self._shared_down = False
        with self._lock:
            for name, text in got:
                theirs = _restored([json.loads(text)]).get(name)
                mine = self.devices.get(name)
                if theirs is None or (mine is not None and mine.last_contact >= theirs.last_contact):
                    continue
                if mine is not None:  # what this replica stored, it counts itself
                    theirs.samples, theirs.batches = mine.samples, mine.batches
                    theirs.duplicates = mine.duplicates
                else:
                    theirs.samples = theirs.batches = theirs.duplicates = 0
                self.devices[name] = theirs

    def labels_of(self, device: str) -> dict[str, str]:
        """The labels ``device``'s agent last reported."""
        with self._lock:
            st = self.devices.get(device)
            return dict(st.labels) if st else {}

    def fleet(self) -> list[dict[str, Any]]:
        """One row per device, configured or heard from (``_edge_fleet``)."""
        with self._lock:
            statuses = [dict(vars(st)) for st in self.devices.values()]
        return fleet_rows(statuses, self.config.devices, self.clock.now(), self._started)

    def start(self, interval: float) -> None:
        """Run :meth:`watch` every ``interval`` seconds on a daemon thread."""
        def run() -> None:
            while not self.clock.wait(self._stop, interval):
                try:
                    self.watch(self.clock.now())
                except Exception:
                    log.exception("edge device watch failed; going on")

        self._thread = threading.Thread(target=run, name="inferwatch-edge-watch", daemon=True)
        self._thread.start()

    def device_of(self, authorization: str) -> str | None:
        """The device whose token is in ``Authorization: Bearer ...``: found by the token's SHA-256 (a
        fleet of 5,000 is one lookup, not 5,000 comparisons), then compared in constant time."""
        scheme, _, got = authorization.partition(" ")
        if scheme.lower() != "bearer" or not got:
            return None
        name = self._by_digest.get(hashlib.sha256(got.encode()).digest())
        if name is None:
            return None
        token = self.config.devices[name].reveal()
        return name if hmac.compare_digest(got.encode(), token.encode()) else None

    def ingest(self, authorization: str, body: bytes) -> dict[str, Any]:
        """Store one batch; raises ``_Reject`` with the HTTP status for a bad request."""
        if len(body) > self.config.max_body_bytes:
            raise _Reject(413, f"body: {len(body)} bytes, over the limit of {self.config.max_body_bytes}")
        device = self.device_of(authorization)
        if device is None:
            raise _Reject(401, "no valid device token (Authorization: Bearer <token>)")
        try:
            batch = decode_batch(body, max_bytes=self.config.max_decoded_bytes,
                                 max_samples=self.config.max_samples,
                                 known=lambda spool, sid: self.seen.labels(device, spool, sid))
        except UnknownSeries as exc:
            raise _Reject(409, str(exc)) from None
        except InputError as exc:
            raise _Reject(400, str(exc)) from None
        spool = batch.batch_id.partition(":")[0]
        if batch.defs:
            kinds = dict(batch.kinds) if batch.version == 3 else None
            self.seen.define(device, spool, dict(batch.defs), kinds)
        if (batch.version == 1 or batch.device) and batch.device != device:
            raise _Reject(403, f"body.device: {batch.device!r:.80} is not the device of this token")
        now = self.clock.now()
        key = (device, batch.batch_id)
        with self._lock:  # one batch of a device at a time: the seen-check and the queueing agree
            status = self.devices.setdefault(device, DeviceStatus(device))
            self._dirty.add(device)
            status.last_contact, status.backlog = now, batch.agent.backlog
            status.dropped, status.heartbeat_s = dict(batch.agent.dropped), batch.heartbeat_s
            _agent_said(status, batch.agent, now)
            if key in self._writing:  # the agent gave up waiting and sent it again: its first try decides
                raise _Reject(429, f"batch {batch.batch_id!r:.80} is being stored; send it again later")
            if self.seen.seen(device, batch.batch_id):
                up = _Upload(device, batch.batch_id, now, status, [], 0, duplicate=True)
            else:
                stored = [Sample(s.labels.with_(device=device), s.t, s.v) for s in batch.samples]
                try:  # as every way in: refused whole for a sample out of bounds or a limit (the store's)
                    check_batch(self.store, [s.labels for s in stored], [s.t for s in stored], now,
                                sample_limit=0, what="this edge batch",  # edge.max_samples bounds it
                                retention=self.retention)
                except InputError as exc:
                    raise _Reject(400, f"body: {exc}") from None
                received = len(stored)
                if batch.version == 3 and batch.step > 0:  # the points between sent ones (_edge_fill)
                    ids = self.seen.counters(device, spool)
                    counters = {x.labels for x, i in zip(stored, batch.series_ids, strict=True) if i in ids}
                    stored = self.filler.fill(stored, counters.__contains__, batch.step, batch.heartbeat_max,
                                              device)
                up = _Upload(device, batch.batch_id, now, status, stored, received)
            self._writing.add(key)
        try:  # answered once the group holding it is committed (_edge_commit)
            self._commits.submit(up)
        except InputError as exc:
            raise _Reject(400, f"body: {exc}") from None
        finally:
            with self._lock:
                self._writing.discard(key)
        if up.duplicate:
            return {"status": "duplicate", "batch": batch.batch_id, "samples": 0}
        return {"status": "success", "batch": batch.batch_id, "samples": up.received}

    def _write(self, group: list[_Upload]) -> None:
        """Store a group of uploads: their samples and each device's own series in one append, their
        batch ids and statistics in one transaction; the counts move only once both are committed."""
        with self._lock:
            counts: dict[str, tuple[int, int, int]] = {}
            for up in group:
                st = self.devices.get(up.device, up.status)
                samples, batches, dups = counts.get(up.device, (st.samples, st.batches, st.duplicates))
                counts[up.device] = (samples + up.received, batches + (not up.duplicate), dups + up.duplicate)
            statuses = {d: dict(vars(self.devices[d]), samples=c[0], batches=c[1], duplicates=c[2])
                        for d, c in counts.items()}
        out: list[Sample] = [x for up in group for x in up.samples]
        for d, row in statuses.items():
            labels, now = {"device": d}, row["last_contact"]
            out += [sample(m.EDGE_LAST_CONTACT, now, now, labels),
                    sample(m.EDGE_INGESTED_SAMPLES_TOTAL, now, row["samples"], labels),
                    sample(m.EDGE_DUPLICATE_BATCHES_TOTAL, now, row["duplicates"], labels)]
        self.store.append(out)
        self.seen.add_many([(up.device, up.batch_id) for up in group if not up.duplicate],
                           max(up.now for up in group), self.config.seen_batches_for, list(statuses.values()))
        with self._lock:
            for d, (samples, batches, dups) in counts.items():
                st = self.devices[d]
                st.samples, st.batches, st.duplicates = samples, batches, dups

    def close(self) -> None:
        """Stop watching and close the batch-id file (and the pair's connection)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
        self.seen.close()
        if self.shared is not None:
            self.shared.close()


def ingest_routes(ingest: EdgeIngest) -> list[Route]:
    """``POST /api/v1/edge/ingest`` and ``GET /api/v1/edge/devices``."""

    async def post(request: Request) -> Response:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > ingest.config.max_body_bytes:
            return _error(413, f"body: {declared} bytes, over the limit of {ingest.config.max_body_bytes}")
        body = bytearray()
        try:
            async for chunk in request.stream():
                body += chunk
                if len(body) > ingest.config.max_body_bytes:
                    return _error(413, f"body: over the limit of {ingest.config.max_body_bytes} bytes")
        except ClientDisconnect:  # the device went away mid-body (killed, network): it will resend
            return _error(400, "body: the client disconnected before sending it all")
        try:
            result = await run_in_threadpool(ingest.ingest, request.headers.get("authorization", ""),
                                             bytes(body))
        except _Reject as exc:
            return _error(exc.status, str(exc))
        except StoreError as exc:
            return _error(503, f"store: {exc}")
        except Exception:  # a bug, not the device's fault: logged, answered as JSON (the agent retries)
            log.exception("edge ingest failed")
            return _error(500, "internal error")
        return JSONResponse(result)

    async def devices(_: Request) -> Response:
        rows = sorted(ingest.devices.values(), key=lambda d: d.device)
        return JSONResponse({"status": "success", "data": [vars(d) for d in rows]})

    async def agent_config(request: Request) -> Response:
        device = ingest.device_of(request.headers.get("authorization", ""))
        if device is None:
            return _error(401, "no valid device token (Authorization: Bearer <token>)")
        got, config = ingest.agent_configs.for_device(device, ingest.labels_of(device))
        etag = f'"{got}"'
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers={"ETag": etag})
        return JSONResponse({"hash": got, "config": config}, headers={"ETag": etag})

    async def fleet(request: Request) -> Response:
        try:
            query = parse_fleet_query(request.query_params)
        except InputError as exc:
            return _error(400, str(exc))
        return JSONResponse({"status": "success", "data": fleet_view(ingest.fleet(), **query)})

    return [Route(INGEST_PATH, post, methods=["POST"]),
            Route("/api/v1/edge/devices", devices, methods=["GET"]),
            Route("/api/v1/edge/fleet", fleet, methods=["GET"]),
            Route("/api/v1/edge/config", agent_config, methods=["GET"])]


def _error(status: int, message: str) -> JSONResponse:
    kind = {400: "bad_data", 409: "unknown_series"}.get(status, "edge")
    return JSONResponse({"status": "error", "errorType": kind,
                         "error": message}, status_code=status)
