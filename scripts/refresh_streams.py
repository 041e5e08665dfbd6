#!/usr/bin/env python3
"""Refresh the in-repo stream corpus (``tests/streams``) from a grown upstream copy.

The corpus is collected outside this repository (the upstream collection's ``streams`` folder,
with its MANIFEST and licenses) and shipped in ``tests/streams`` so a clone or sdist tests
without anything beside it. When the upstream folder grows, run::

    python scripts/refresh_streams.py SOURCE [--dest tests/streams] [--delete] [--dry-run]

New and changed files are copied (byte comparison, so timestamps do not matter) and every
change is listed. Files that exist only in the repository are reported and kept: an upstream
folder that lost files is more often a partial checkout than a decision, so deleting needs
``--delete``. Afterwards regenerate the real-vendor cassettes
(``python scripts/make_real_cassettes.py``) and add expectations for new streams in
``tests/core/stream_expectations.py`` (``tests/core/test_streams.py`` lists the missing ones).

Standard library only, so it runs before anything is installed.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DEST = REPO / "tests" / "streams"
# Editor/OS litter that must never enter the corpus.
IGNORED_NAMES = frozenset({".DS_Store", "__pycache__", "Thumbs.db"})


@dataclass
class Changes:
    """What a refresh did (or would do, with ``--dry-run``), as paths relative to the roots."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    only_in_dest: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0


def _files(root: Path) -> dict[str, Path]:
    return {
        p.relative_to(root).as_posix(): p
        for p in sorted(root.rglob("*"))
        if p.is_file() and not IGNORED_NAMES.intersection(p.relative_to(root).parts)
    }


def refresh(source: Path, dest: Path, *, delete: bool = False, dry_run: bool = False) -> Changes:
    """Make ``dest`` hold every file of ``source``; remove dest-only files only if ``delete``."""
    src_files = _files(source)
    dst_files = _files(dest) if dest.is_dir() else {}
    changes = Changes()
    for rel, src in src_files.items():
        target = dest / rel
        if rel not in dst_files:
            changes.added.append(rel)
        elif not filecmp.cmp(src, target, shallow=False):
            changes.changed.append(rel)
        else:
            changes.unchanged += 1
            continue
        if not dry_run:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
    for rel in dst_files.keys() - src_files.keys():
        if delete:
            changes.deleted.append(rel)
            if not dry_run:
                (dest / rel).unlink()
        else:
            changes.only_in_dest.append(rel)
    changes.only_in_dest.sort()
    changes.deleted.sort()
    return changes


def _report(changes: Changes, dry_run: bool) -> str:
    verb = "would " if dry_run else ""
    lines = [f"{verb}add    {p}" for p in changes.added]
    lines += [f"{verb}update {p}" for p in changes.changed]
    lines += [f"{verb}delete {p}" for p in changes.deleted]
    lines += [f"kept (not upstream; --delete removes) {p}" for p in changes.only_in_dest]
    lines.append(
        f"{len(changes.added)} added, {len(changes.changed)} changed, "
        f"{len(changes.deleted)} deleted, {len(changes.only_in_dest)} only in the repository, "
        f"{changes.unchanged} unchanged"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path,
                        help="the upstream corpus folder (its streams/ directory, MANIFEST.md at its top)")
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST,
                        help=f"in-repo copy (default: {DEFAULT_DEST})")
    parser.add_argument("--delete", action="store_true",
                        help="remove files that are no longer upstream")
    parser.add_argument("--dry-run", action="store_true", help="report without copying")
    args = parser.parse_args(argv)
    if not (args.source / "MANIFEST.md").is_file():
        parser.error(f"{args.source} does not look like the stream corpus (no MANIFEST.md)")
    changes = refresh(args.source, args.dest, delete=args.delete, dry_run=args.dry_run)
    sys.stdout.write(_report(changes, args.dry_run) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
