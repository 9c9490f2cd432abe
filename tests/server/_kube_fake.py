"""A small fake of the Kubernetes API on loopback: list and watch of the objects discovery reads.

As the API documents them: ``GET /api/v1/{resource}`` and ``/api/v1/namespaces/{ns}/{resource}``
(pods, services, endpoints; nodes only cluster-wide), ``/apis/discovery.k8s.io/v1/...endpointslices``
and ``/apis/networking.k8s.io/v1/...ingresses`` answer a ``{Kind}List`` with
``metadata.resourceVersion``; with ``watch=true`` (or ``1``) they stream one JSON event per line
(``ADDED``, ``MODIFIED``, ``DELETED``) for every change after the given ``resourceVersion`` until
``timeoutSeconds``; a version older than the oldest kept change is answered with an ``ERROR``
event of code 410 (Gone). ``labelSelector`` (``k=v``, ``k==v``, ``k!=v``, ``k``, ``!k``) and
``fieldSelector`` (``metadata.name`` and ``metadata.namespace`` with ``=``, ``==``, ``!=``) filter.
Stricter than the API (which ignores what it does not know): a query parameter that the list and
watch operations do not document, or a malformed selector, is answered 400, so a client's mistake
fails its test. Every request is recorded, so a test can check how a client used the API.
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

KINDS = {"pods": "Pod", "services": "Service", "nodes": "Node", "endpoints": "Endpoints",
         "endpointslices": "EndpointSlice", "ingresses": "Ingress"}
GROUPS = {"endpointslices": "discovery.k8s.io/v1", "ingresses": "networking.k8s.io/v1"}  # others: core v1
# the query parameters of the list and watch operations in the API reference
DOCUMENTED = {"allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "pretty",
              "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch"}
MAX_WATCH_S = 20.0  # a watch is held at most this long (clients resume it), so a shutdown is quick


@dataclass
class FakeKube:
    """The objects by resource, the change log, and the requests seen."""

    objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = field(
        default_factory=lambda: {r: {} for r in KINDS})
    events: list[tuple[int, str, str, dict[str, Any]]] = field(default_factory=list)
    version: int = 1
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)  # each request's Authorization header
    url: str = ""
    oldest: int = 0  # changes at or before this version are forgotten (compaction): older watches get 410
    failing: bool = False  # answer 503 to everything (an API server that is down)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _closing: bool = False

    def put(self, resource: str, obj: dict[str, Any]) -> None:
        """Create or replace an object (an ADDED or MODIFIED event)."""
        with self._cond:
            self.version += 1
            obj = {"apiVersion": GROUPS.get(resource, "v1"), "kind": KINDS[resource], **copy.deepcopy(obj)}
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
    if parts[:2] == ["api", "v1"]:
        rest = parts[2:]
        group = "v1"
    elif parts[:1] == ["apis"] and len(parts) > 3:
        rest, group = parts[3:], f"{parts[1]}/{parts[2]}"
    else:
        return None
    if len(rest) == 1 and rest[0] in KINDS and GROUPS.get(rest[0], "v1") == group:
        return None, rest[0]
    if (len(rest) == 3 and rest[0] == "namespaces" and rest[2] in KINDS and rest[2] != "nodes"
            and GROUPS.get(rest[2], "v1") == group):
        return rest[1], rest[2]
    return None


class BadSelector(ValueError):
    """A selector the API would refuse (400)."""


def _label_term(labels: dict[str, str], term: str) -> bool:
    term = term.strip()
    for op in ("!=", "==", "="):
        if op in term:
            key, _, value = term.partition(op)
            if not key.strip():
                raise BadSelector(f"invalid label selector term {term!r}")
            found = labels.get(key.strip())
            return bool(found != value.strip()) if op == "!=" else bool(found == value.strip())
    if term.startswith("!"):
        return term[1:] not in labels
    if not term or " " in term:
        raise BadSelector(f"invalid label selector term {term!r}")
    return term in labels


def _field_term(meta: dict[str, Any], term: str) -> bool:
    for op in ("!=", "==", "="):
        if op in term:
            key, _, value = term.partition(op)
            fields = {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}
            if key not in fields:
                raise BadSelector(f"field label not supported: {key}")
            return bool(fields[key] != value) if op == "!=" else bool(fields[key] == value)
    raise BadSelector(f"invalid field selector term {term!r}")


def _selected(obj: dict[str, Any], namespace: str | None, query: dict[str, str]) -> bool:
    meta = obj["metadata"]
    if namespace is not None and meta.get("namespace") != namespace:
        return False
    labels = meta.get("labels") or {}
    return (all(_label_term(labels, t) for t in query.get("labelSelector", "").split(",") if t)
            and all(_field_term(meta, t) for t in query.get("fieldSelector", "").split(",") if t))


def _handler(kube: FakeKube) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            kube.requests.append((url.path, query))
            kube.authorizations.append(self.headers.get("Authorization", ""))
            route = _route(url.path)
            if kube.failing:
                self._json(503, {"kind": "Status", "code": 503, "message": "the server is down"})
                return
            if route is None:
                self._json(404, {"kind": "Status", "code": 404, "message": f"not found: {url.path}"})
                return
            unknown = sorted(set(query) - DOCUMENTED)
            if unknown:
                self._json(400, {"kind": "Status", "code": 400,
                                 "message": f"not a list/watch parameter: {unknown}"})
                return
            namespace, resource = route
            try:
                for term in filter(None, query.get("labelSelector", "").split(",")):
                    _label_term({}, term)
                for term in filter(None, query.get("fieldSelector", "").split(",")):
                    _field_term({}, term)
            except BadSelector as exc:
                self._json(400, {"kind": "Status", "code": 400, "reason": "BadRequest", "message": str(exc)})
                return
            if query.get("watch") in ("true", "1"):
                self._watch(namespace, resource, query)
                return
            with kube._cond:
                items = [o for o in kube.objects[resource].values() if _selected(o, namespace, query)]
                version = kube.version
            self._json(200, {"kind": f"{KINDS[resource]}List", "apiVersion": GROUPS.get(resource, "v1"),
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
                             and _selected(e[3], namespace, query)]
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
