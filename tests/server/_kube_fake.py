"""A small fake of the Kubernetes API on loopback: list and watch of pods, services and nodes.

As the API documents them: ``GET /api/v1/{resource}`` and ``/api/v1/namespaces/{ns}/{resource}``
answer a ``{Kind}List`` with ``metadata.resourceVersion``; with ``watch=true`` (or ``1``) they
stream one JSON event per line (``ADDED``, ``MODIFIED``, ``DELETED``) for every change after the
given ``resourceVersion`` until ``timeoutSeconds``; a version older than the oldest kept change is
answered with an ``ERROR`` event of code 410 (Gone). ``labelSelector`` with ``k=v`` terms filters.
Every request is recorded, so a test can check how a client used the API.
"""

from __future__ import annotations

import copy
import http.server
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

KINDS = {"pods": "Pod", "services": "Service", "nodes": "Node", "endpoints": "Endpoints"}
MAX_WATCH_S = 20.0  # a watch is held at most this long (clients resume it), so a shutdown is quick


@dataclass
class FakeKube:
    """The objects by resource, the change log, and the requests seen."""

    objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = field(
        default_factory=lambda: {r: {} for r in KINDS})
    events: list[tuple[int, str, str, dict[str, Any]]] = field(default_factory=list)
    version: int = 1
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    url: str = ""
    oldest: int = 0  # changes at or before this version are forgotten (compaction): older watches get 410
    failing: bool = False  # answer 503 to everything (an API server that is down)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _closing: bool = False

    def put(self, resource: str, obj: dict[str, Any]) -> None:
        """Create or replace an object (an ADDED or MODIFIED event)."""
        with self._cond:
            self.version += 1
            obj = {"apiVersion": "v1", "kind": KINDS[resource], **copy.deepcopy(obj)}
            meta = obj.setdefault("metadata", {})
            meta["resourceVersion"] = str(self.version)
            meta.setdefault("uid", f"uid-{meta['name']}")
            key = (meta.get("namespace", ""), meta["name"])
            kind = "MODIFIED" if key in self.objects[resource] else "ADDED"
            self.objects[resource][key] = obj
            self.events.append((self.version, kind, resource, obj))
            self._cond.notify_all()

    def delete(self, resource: str, namespace: str, name: str) -> None:
        """Delete an object (a DELETED event)."""
        with self._cond:
            self.version += 1
            obj = self.objects[resource].pop((namespace, name))
            obj = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self.version)}}
            self.events.append((self.version, "DELETED", resource, obj))
            self._cond.notify_all()

    def watches(self) -> list[dict[str, str]]:
        """The query parameters of the watch requests seen."""
        return [q for _, q in self.requests if q.get("watch") in ("true", "1")]


def _route(path: str) -> tuple[str | None, str] | None:
    parts = path.strip("/").split("/")
    if parts[:2] != ["api", "v1"]:
        return None
    if len(parts) == 3 and parts[2] in KINDS:
        return None, parts[2]
    if len(parts) == 5 and parts[2] == "namespaces" and parts[4] in KINDS:
        return parts[3], parts[4]
    return None


def _selected(obj: dict[str, Any], namespace: str | None, selector: str) -> bool:
    meta = obj["metadata"]
    if namespace is not None and meta.get("namespace") != namespace:
        return False
    labels = meta.get("labels") or {}
    return all(labels.get(k) == v for k, _, v in (t.partition("=") for t in selector.split(",") if t))


def _handler(kube: FakeKube) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            kube.requests.append((url.path, query))
            route = _route(url.path)
            if kube.failing:
                self._json(503, {"kind": "Status", "code": 503, "message": "the server is down"})
                return
            if route is None:
                self._json(404, {"kind": "Status", "code": 404, "message": f"not found: {url.path}"})
                return
            namespace, resource = route
            if query.get("watch") in ("true", "1"):
                self._watch(namespace, resource, query)
                return
            with kube._cond:
                items = [o for o in kube.objects[resource].values()
                         if _selected(o, namespace, query.get("labelSelector", ""))]
                version = kube.version
            self._json(200, {"kind": f"{KINDS[resource]}List", "apiVersion": "v1",
                             "metadata": {"resourceVersion": str(version)}, "items": items})

        def _watch(self, namespace: str | None, resource: str, query: dict[str, str]) -> None:
            since = int(query.get("resourceVersion") or 0)
            end = time.monotonic() + min(float(query.get("timeoutSeconds") or MAX_WATCH_S), MAX_WATCH_S)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            if since and since < kube.oldest:
                status = {"kind": "Status", "apiVersion": "v1", "code": 410, "reason": "Expired",
                          "message": "too old resource version"}
                gone = {"type": "ERROR", "object": status}
                self.wfile.write(json.dumps(gone).encode() + b"\n")
                return
            while time.monotonic() < end and not kube._closing:
                with kube._cond:
                    fresh = [e for e in kube.events if e[0] > since and e[2] == resource
                             and _selected(e[3], namespace, query.get("labelSelector", ""))]
                    if not fresh:
                        kube._cond.wait(0.2)
                        continue
                for version, kind, _, obj in fresh:
                    since = version
                    try:
                        self.wfile.write(json.dumps({"type": kind, "object": obj}).encode() + b"\n")
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return

        def _json(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def fake_kube() -> Iterator[FakeKube]:
    """A running fake API on an ephemeral loopback port."""
    kube = FakeKube()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(kube))
    server.daemon_threads = True
    th = threading.Thread(target=server.serve_forever, daemon=True)
    th.start()
    kube.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield kube
    finally:
        kube._closing = True
        server.shutdown()
        server.server_close()
        th.join(10)


def pod(name: str, ip: str, *, namespace: str = "default", labels: dict[str, str] | None = None,
        ports: tuple[int, ...] = (8000,)) -> dict[str, Any]:
    """A running, ready pod with one container exposing ``ports`` (named ``metrics`` first)."""
    container = {"name": "server", "image": "ranker:1",
                 "ports": [{"name": "metrics" if i == 0 else f"p{i}", "containerPort": p, "protocol": "TCP"}
                           for i, p in enumerate(ports)]}
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels or {},
                         "annotations": {"prometheus.io/scrape": "true"},
                         "ownerReferences": [{"kind": "ReplicaSet", "name": "ranker-7d9", "controller": True,
                                              "apiVersion": "apps/v1", "uid": "rs-1"}]},
            "spec": {"nodeName": "gpu-node-1", "containers": [container]},
            "status": {"phase": "Running", "podIP": ip, "hostIP": "10.0.0.1",
                       "conditions": [{"type": "Ready", "status": "True"}],
                       "containerStatuses": [{"name": "server", "containerID": f"containerd://{name}"}]}}
