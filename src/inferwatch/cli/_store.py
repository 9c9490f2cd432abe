"""``inferwatch store {check,repair,backup}``: the data directory's SQLite files, for an operator."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from inferwatch.cli._common import add_config_arg

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``store`` and its verbs."""
    p: argparse.ArgumentParser = sub.add_parser(
        "store", help="check, repair or back up the data directory's files",
        description="The SQLite files of the data directory (server.data_dir or $INFERWATCH_DATA_DIR): "
        "the store, the alert and alerting state, edge, traces, outcomes, the remote-write queue. "
        "docs/operations.md says when to use each.")
    verbs = p.add_subparsers(dest="store_verb", metavar="VERB", required=True)
    check = verbs.add_parser("check", help="SQLite's own check of every file (exit 1 when one is damaged)",
                             description="Run SQLite's quick_check (--full: integrity_check) on every "
                             "*.sqlite file of the data directory; safe while the server runs.")
    add_config_arg(check)
    check.add_argument("--full", action="store_true", help="integrity_check: slower, also checks indexes")
    check.set_defaults(func=_check)
    repair = verbs.add_parser(
        "repair", help="copy damaged files aside and recover their readable rows (server stopped)",
        description="For each damaged file (or each FILE named): copy it aside as NAME.damaged-STAMP "
        "(never deleted) and replace it with every row that can still be read; print what was lost. "
        "`serve` does the same at start; this is for an operator, with the server stopped.")
    add_config_arg(repair)
    repair.add_argument("files", nargs="*", metavar="FILE", help="file names in the data directory "
                        "(default: every damaged *.sqlite)")
    repair.set_defaults(func=_repair)
    backup = verbs.add_parser(
        "backup", help="a consistent copy of every file into DIR (while the server runs)",
        description="Copy every file of the data directory into DIR (new or empty) with SQLite's online "
        "backup API: each file is one consistent state even while `serve` writes. Restore: stop the "
        "server, copy DIR's files into an empty data directory, start it (docs/operations.md).")
    add_config_arg(backup)
    backup.add_argument("dir", metavar="DIR", help="where the backup goes (new or empty)")
    backup.set_defaults(func=_backup)


def _data_dir(args: argparse.Namespace) -> Path:
    from inferwatch.config import load_config
    from inferwatch.server import data_dir_of

    return data_dir_of(load_config(args.config))


def _files(data_dir: Path) -> list[Path]:
    from inferwatch._exceptions import InputError

    if not data_dir.is_dir():
        raise InputError(f"no data directory at {data_dir} (server.data_dir, $INFERWATCH_DATA_DIR)")
    return sorted(data_dir.glob("*.sqlite"))


def _check(args: argparse.Namespace) -> int:
    from inferwatch.store import check_file

    bad = 0
    for path in _files(_data_dir(args)):
        problems = check_file(path, full=args.full)
        bad += bool(problems)
        print(f"{path.name}: {'damaged: ' + problems[0] if problems else 'ok'}")
    return 1 if bad else 0


def _repair(args: argparse.Namespace) -> int:
    from inferwatch._exceptions import InputError
    from inferwatch.server import DataDirLock, check_data_dir
    from inferwatch.store import check_file, repair_file

    data_dir = _data_dir(args)
    files = _files(data_dir)
    with DataDirLock.acquire(data_dir):  # a running server holds it: repair only what nothing writes
        if not args.files:
            found = check_data_dir(data_dir, print)
            if not found:
                print(f"{len(files)} files checked: none is damaged")
            return 0
        for name in args.files:
            path = data_dir / name
            if path not in files:
                raise InputError(f"{name}: not a *.sqlite file of {data_dir}")
            got = repair_file(path)
            print(f"{name}: {sum(got.rows.values())} rows kept; unreadable: "
                  f"{', '.join(got.damaged_tables) or 'nothing'}; the old file is kept as {got.copy.name}"
                  + ("" if check_file(path) == [] else " (the new file still fails its check)"))
    return 0


def _backup(args: argparse.Namespace) -> int:
    from inferwatch.store import backup_data_dir

    data_dir = _data_dir(args)
    done = backup_data_dir(data_dir, Path(args.dir))
    for f in done:
        print(f"{f.name}: {f.bytes} bytes{' (SQLite online backup)' if f.sqlite else ''}")
    print(f"backed up {len(done)} files of {data_dir} into {args.dir}", file=sys.stderr)
    return 0
