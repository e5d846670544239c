"""The workspace store: the only package in lsqa that contains SQL.

``db`` holds connections and migrations; one module per area holds that area's reads and writes.
"""

from lsqa.store.db import (
    MigrationChanged,
    WorkspaceError,
    connect,
    forget_migrated,
    is_read_only,
    migrate,
    transaction,
    write,
)

__all__ = ["MigrationChanged", "WorkspaceError", "connect", "forget_migrated", "is_read_only", "migrate", "transaction", "write"]
