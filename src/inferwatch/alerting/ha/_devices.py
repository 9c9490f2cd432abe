"""The edge device registry in the pair's database: each device's last report, whichever replica took it.

An agent may upload to either replica (through a load balancer, or to the other after a
failover). Each replica writes the devices it heard from since its last round and reads back
those another replica heard from more recently, so both know each device's last contact,
backlog and what its agent reports of itself, and ``EdgeDeviceOffline`` pages on neither
while the device uploads to one. Which batches were stored (and their series definitions)
stays with each replica, with the time series they went into.

Rows: ``(device, status as JSON, last contact)``; a row only replaces an older contact.
"""

from __future__ import annotations

from inferwatch.alerting.ha._link import SharedLink

__all__ = ["SharedDevices"]


class SharedDevices:
    """The ``edge_devices`` table; ``StoreError`` while the database is gone."""

    def __init__(self, link: SharedLink) -> None:
        self._link = link

    def sync(self, changed: list[tuple[str, str, float]], known: dict[str, float]) -> list[tuple[str, str]]:
        """Write ``changed`` (device, status, last contact), then return (device, status) of each device
        whose last contact in the database is newer than ``known``'s (this replica's)."""
        with self._link.transaction() as c:
            if changed:
                c.cursor().executemany(
                    "INSERT INTO edge_devices VALUES (%s, %s, %s) ON CONFLICT (device) DO UPDATE SET "
                    "status = EXCLUDED.status, last_contact = EXCLUDED.last_contact "
                    "WHERE edge_devices.last_contact <= EXCLUDED.last_contact", changed)
            rows = c.execute("SELECT device, last_contact FROM edge_devices").fetchall()
            newer = [str(d) for d, t in rows if float(t) > known.get(str(d), float("-inf"))]
            if not newer:
                return []
            got = c.execute("SELECT device, status FROM edge_devices WHERE device = ANY(%s)", (newer,))
            return [(str(d), str(s)) for d, s in got.fetchall()]

    def close(self) -> None:
        """Close its connection."""
        self._link.close()
