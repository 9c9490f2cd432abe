"""Multi-worker mode: worker processes share their aggregated state through one SQLite file.

Imported only when a ``Monitor`` is given a multiprocess directory (it loads ``sqlite3``).
"""

from inferwatch.sdk.multiproc._multiproc import MultiprocStore

__all__ = ["MultiprocStore"]
