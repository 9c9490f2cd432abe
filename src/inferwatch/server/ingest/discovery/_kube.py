"""``kubernetes_sd_configs``: list, then watch, the role's objects from the Kubernetes API.

As the API documents it (and client-go does for Prometheus): ``GET`` the list,
remember its ``metadata.resourceVersion``, then ``GET ...?watch=true&
resourceVersion=RV`` and apply each streamed event (``ADDED``, ``MODIFIED``,
``DELETED``; ``BOOKMARK`` moves the version; an ``ERROR`` with code 410 means
the version is gone: list again). A watch that ends is resumed from the last
version; a failure lists again after ``RETRY_S``, keeping the last objects
(never an empty target list because of an error). One thread per watched path
(a resource in a namespace, or in the whole cluster), started with the scrape
loop. A role that reads other objects (``endpoints`` and ``endpointslice``
read services and pods, and nodes with ``attach_metadata``) watches those
too, and any change rebuilds the groups from all of them.
"""

from __future__ import annotations

import json
import logging
import os
import ssl
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from inferwatch import _env as env
from inferwatch._exceptions import ConfigError
from inferwatch.config import KubernetesSDConfig
from inferwatch.model import Clock
from inferwatch.server.ingest.discovery._groups import DiscoveryError, TargetGroup
from inferwatch.server.ingest.discovery._kube_roles import ROLES, Stream, streams
from inferwatch.server.ingest.discovery._kubeconfig import read_kubeconfig

__all__ = ["SERVICE_ACCOUNT_DIR", "KubernetesSource"]

log = logging.getLogger(__name__)

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
WATCH_TIMEOUT_S = 300  # the server ends each watch after this (``timeoutSeconds``); it is resumed
RETRY_S = 5.0


class _Gone(Exception):
    """The watch's resourceVersion is too old (410): list again."""


class KubernetesSource:
    """One ``kubernetes_sd_configs`` entry."""

    mechanism = "kubernetes"

    def __init__(self, cfg: KubernetesSDConfig, *, clock: Clock, transport: httpx.BaseTransport | None = None,
                 service_account_dir: Path = SERVICE_ACCOUNT_DIR) -> None:
        self.cfg, self.clock = cfg, clock
        self._account = service_account_dir
        self._own_namespace = ""
        base, headers, verify = self._connection()
        self._client = httpx.Client(base_url=base, headers={"Accept": "application/json", **headers},
                                    verify=verify, transport=transport,
                                    timeout=httpx.Timeout(30.0, read=WATCH_TIMEOUT_S + 30.0))
        self._streams: dict[str, Stream] = {s.path: s for s in streams(cfg, self._namespaces())}
        self._objects: dict[str, dict[str, dict[str, Any]]] = {p: {} for p in self._streams}
        self._lock = threading.Lock()
        self._changed = False
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.error = ""

    def _connection(self) -> tuple[str, dict[str, str], ssl.SSLContext | bool]:
        cfg = self.cfg
        if cfg.api_server is not None:
            headers = {"Authorization": cfg.authorization.header()} if cfg.authorization is not None else {}
            return cfg.api_server.rstrip("/"), headers, cfg.tls_config.context() if cfg.tls_config else True
        if cfg.kubeconfig_file is not None:
            return read_kubeconfig(Path(cfg.kubeconfig_file))
        host, port = os.environ.get(env.ENV_KUBERNETES_HOST), os.environ.get(env.ENV_KUBERNETES_PORT)
        if not host or not port:
            raise ConfigError("kubernetes_sd_configs without api_server or kubeconfig_file needs to run in a "
                              f"cluster ({env.ENV_KUBERNETES_HOST} and {env.ENV_KUBERNETES_PORT} are unset)")
        try:
            token = (self._account / "token").read_text().strip()
            verify = ssl.create_default_context(cafile=str(self._account / "ca.crt"))
            if cfg.namespaces.own_namespace:
                self._own_namespace = (self._account / "namespace").read_text()
        except OSError as exc:
            raise ConfigError(f"kubernetes_sd_configs: the service account cannot be read: {exc}") from None
        if cfg.namespaces.own_namespace and not self._own_namespace:
            raise ConfigError("kubernetes_sd_configs: could not read own namespace name (empty file)")
        host = f"[{host}]" if ":" in host else host
        return f"https://{host}:{port}", {"Authorization": f"Bearer {token}"}, verify

    def _namespaces(self) -> tuple[str, ...]:
        """The namespaces watched (``()``: all), as Prometheus's ``getNamespaces``."""
        names = self.cfg.namespaces.names
        if self.cfg.namespaces.own_namespace and self._own_namespace:
            return (*names, self._own_namespace)
        return names

    def paths(self) -> list[str]:
        """The API paths listed and watched: the role's resource and what it reads, per namespace or all."""
        return list(self._streams)

    @staticmethod
    def _key(obj: dict[str, Any]) -> str:
        meta = obj.get("metadata") or {}
        return f"{meta.get('namespace', '')}/{meta.get('name', '')}"

    def relist(self, path: str) -> str:
        """List ``path`` now (its objects replaced); return the list's resourceVersion."""
        resp = self._client.get(path, params=self._streams[path].params)
        if resp.status_code != 200:
            raise DiscoveryError(f"GET {path}: HTTP {resp.status_code}: {resp.text[:200]}")
        body = resp.json()
        items = {self._key(o): o for o in body.get("items") or []}
        with self._lock:
            self._objects[path], self._changed = items, True
        return str((body.get("metadata") or {}).get("resourceVersion", ""))

    def watch(self, path: str, version: str) -> str:
        """Apply the events of one watch from ``version``; return the last version seen."""
        params = {**self._streams[path].params, "watch": "true", "resourceVersion": version,
                  "allowWatchBookmarks": "true", "timeoutSeconds": str(WATCH_TIMEOUT_S)}
        with self._client.stream("GET", path, params=params) as resp:
            if resp.status_code == 410:
                raise _Gone
            if resp.status_code != 200:
                raise DiscoveryError(f"watch {path}: HTTP {resp.status_code}")
            for line in resp.iter_lines():
                if self._stop.is_set():
                    return version
                if line.strip():
                    version = self._apply(path, json.loads(line), version)
        return version

    def _apply(self, path: str, event: dict[str, Any], version: str) -> str:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == 410:
                raise _Gone
            raise DiscoveryError(f"watch {path}: {obj.get('message', obj)}")
        with self._lock:
            if kind in ("ADDED", "MODIFIED"):
                self._objects[path][self._key(obj)], self._changed = obj, True
            elif kind == "DELETED":
                self._changed = self._objects[path].pop(self._key(obj), None) is not None or self._changed
        return str((obj.get("metadata") or {}).get("resourceVersion", version))

    def _groups(self) -> list[TargetGroup]:
        with self._lock:
            self._changed = False
            by_kind: dict[str, list[dict[str, Any]]] = {}
            for path, by_key in self._objects.items():
                by_kind.setdefault(self._streams[path].kind, []).extend(by_key.values())
        role = ROLES[self.cfg.role]
        index = role.index(by_kind, attach_nodes=self.cfg.attach_metadata.node)
        return [role.build(o, index) for o in by_kind.get("main", [])]

    def poll(self, mono: float) -> list[TargetGroup] | None:
        """The groups when the objects changed. Not started (tests): list every path now."""
        if not self._threads:
            try:
                for path in self.paths():
                    self.relist(path)
                self.error = ""
            except (httpx.HTTPError, ValueError, DiscoveryError) as exc:
                self.error = f"{type(exc).__name__}: {exc}"
        if not self._changed:
            return None
        return self._groups()

    def wait_s(self, mono: float) -> float:
        """Seconds until the next look at the watched objects."""
        return 1.0

    def start(self) -> None:
        """List and watch each path on its own thread until :meth:`stop`."""
        for path in self.paths():
            th = threading.Thread(target=self._run, args=(path,), name=f"kube-{self._streams[path].resource}",
                                  daemon=True)
            th.start()
            self._threads.append(th)

    def _run(self, path: str) -> None:
        version: str | None = None
        while not self._stop.is_set():
            try:
                if version is None:
                    version = self.relist(path)
                version = self.watch(path, version)
                self.error = ""
            except _Gone:
                version = None
            except (httpx.HTTPError, ValueError, DiscoveryError) as exc:
                if not self._stop.is_set():
                    self.error = f"{path}: {type(exc).__name__}: {exc}"
                    version = None
                    self.clock.wait(self._stop, RETRY_S)

    def stop(self, timeout: float = 10.0) -> None:
        """End the watches: the threads stop at their next event or the watch's end, applying nothing.

        A watch blocked in a read on an idle stream cannot be woken from here, so
        this waits at most a second for them all (they are daemon threads, holding nothing).
        """
        self._stop.set()
        self._client.close()
        deadline = time.monotonic() + min(timeout, 1.0)
        for th in self._threads:
            th.join(max(0.0, deadline - time.monotonic()))
