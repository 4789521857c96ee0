"""Moving a store: copy every record, verify by counts and checksum, refuse to overwrite.

`migrate(source, target)` reads the source whole, and:
- the target already holds exactly this state (same checksum): nothing is written (idempotent);
- the target holds other state: refused (exit 7) unless `force`, which replaces it;
- otherwise the records are written (PostgreSQL: one transaction; files: each record
  atomically, the registry last), the target is read back and its counts and checksum must
  equal the source's, or the migration fails (exit 4).
The source is never changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from loopx_core.errors import RefusedError, StateInvalidError
from loopx_core.store import files_bulk
from loopx_core.store.base import Store
from loopx_core.store.files import FileStore
from loopx_core.store.snapshot import Snapshot


@dataclass(frozen=True)
class MigrationReport:
    """What a migration found and did."""

    source: str
    target: str
    counts: dict[str, int]
    checksum: str
    copied: bool
    """False when the target already held exactly this state."""
    replaced: bool
    """True when `force` replaced other state in the target."""

    def to_json(self) -> dict[str, object]:
        """The report as JSON data."""
        return {
            "source": self.source,
            "target": self.target,
            "counts": self.counts,
            "checksum": f"sha256:{self.checksum}",
            "copied": self.copied,
            "replaced": self.replaced,
        }


def read(store: Store) -> Snapshot:
    """The store's whole state."""
    if isinstance(store, FileStore):
        return files_bulk.read(store)
    from loopx_core.store.postgres import bulk

    return bulk.read(store)  # type: ignore[arg-type]


def _write(store: Store, snapshot: Snapshot, *, replace: bool) -> None:
    if isinstance(store, FileStore):
        if replace:
            files_bulk.clear(store)
        files_bulk.write(store, snapshot)
        return
    from loopx_core.store.postgres import bulk

    bulk.write(store, snapshot, replace=replace)  # type: ignore[arg-type]


def migrate(source: Store, target: Store, *, force: bool = False) -> MigrationReport:
    """Copy `source` into `target` and verify the copy; see the module docstring."""
    snapshot = read(source)
    if snapshot.registry is None:
        raise RefusedError(f"the store {source.label} holds no LoopX state to move", code="source_empty")
    counts, checksum = snapshot.counts(), snapshot.checksum()
    existing = read(target)
    report = MigrationReport(source.label, target.label, counts, checksum, copied=True, replaced=False)
    if not existing.is_empty:
        if existing.checksum() == checksum:
            return MigrationReport(source.label, target.label, counts, checksum, copied=False, replaced=False)
        if not force:
            found = existing.counts()
            raise RefusedError(
                f"the target {target.label} already holds other LoopX state ({found['goals']} goals, "
                f"{found['events']} ledger events): pass --force to replace it",
                code="target_not_empty",
            )
        report = MigrationReport(source.label, target.label, counts, checksum, copied=True, replaced=True)
    _write(target, snapshot, replace=not existing.is_empty)
    copied = read(target)
    if copied.counts() != counts or copied.checksum() != checksum:
        raise StateInvalidError(
            f"the copy in {target.label} does not match the source (counts {copied.counts()} vs {counts}): "
            "the source is unchanged; run the migration again with --force",
            code="migration_mismatch",
        )
    return report
