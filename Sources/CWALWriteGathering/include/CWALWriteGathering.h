#ifndef CWALWRITEGATHERING_H
#define CWALWRITEGATHERING_H

/// Makes the process's default SQLite VFS gather a WAL file's contiguous writes and hand them to the file
/// system as one write (at most 64 KiB) when SQLite syncs the WAL, reads it back, or is about to publish its
/// commit in the WAL index: a commit's frames (a 24-byte header and a page each, two writes per frame in
/// SQLite's own unix VFS) reach the kernel in one pwrite64 instead of two per page.
///
/// The bytes written, their order relative to the sync, and what another connection can see are those of
/// SQLite's own VFS: every gathered write is out before the WAL is synced, read, sized, truncated or closed,
/// and before the WAL index's header names the new frames (the database file's shared-memory barrier).
/// Every other file (database, journals, temporary files) is SQLite's own, untouched.
///
/// Call it before opening any database. Idempotent and thread-safe. Returns SQLITE_OK, or SQLite's error
/// code when no default VFS could be found or registered (SQLite's own VFS then stays the default).
int wd_wal_write_gathering_install(void);

/// For the connection `connection` (a `sqlite3 *`) opened through this VFS, the writes SQLite asked of its
/// open WAL file and those issued to the file system for them, since the WAL file was opened: a commit of N
/// frames asks 2N and issues one. Returns SQLITE_OK, or SQLITE_NOTFOUND for a connection opened otherwise.
int wd_wal_write_counts(void *connection, long long *asked, long long *issued);

#endif
