#include "CWALWriteGathering.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

// A file-control opcode of this VFS's own (SQLite passes opcodes it does not know to the VFS): the counts of
// ``wd_wal_write_counts``, answered by the database file for its WAL.
enum { WD_FCNTL_WAL_WRITE_COUNTS = 0x77640031 };

// SQLite's unix VFS writes at most 128 KiB - 1 bytes in one call (seekAndWrite masks the length with 0x1ffff):
// a gathered run is issued before it grows past 64 KiB.
enum { gatheredCapacity = 64 * 1024 };

typedef struct WALFile WALFile;

// Both kinds of file wrapped begin with `base` and `real`, and SQLite's own file follows the wrapper in the memory
// SQLite allocated (`szOsFile`); every other file is SQLite's own, unwrapped.

/// A main database file: SQLite's own file, followed by the WAL file it has open (if any), whose gathered
/// writes must be out before this file's shared-memory barrier publishes a commit.
typedef struct DatabaseFile {
    sqlite3_file base;
    sqlite3_file *real;
    WALFile *wal;
} DatabaseFile;

/// A WAL file: SQLite's own file and the run of contiguous writes not yet issued to it.
struct WALFile {
    sqlite3_file base;
    sqlite3_file *real;
    DatabaseFile *database;
    unsigned char *gathered;
    sqlite3_int64 offset;
    int length;
    /// A failed issue that no caller could be told about (the barrier returns nothing): the next call reports it.
    int deferredError;
    /// Writes SQLite asked for, and writes issued to the file for them (see ``wd_wal_write_counts``).
    long long asked, issued;
};

static sqlite3_vfs *parentVFS;
static sqlite3_vfs gatheringVFS;
static sqlite3_io_methods databaseMethods;
static sqlite3_io_methods walMethods;

/// Hands the gathered run to SQLite's own file (or reports the failure the barrier could not).
static int issue(WALFile *wal) {
    if (wal->deferredError != SQLITE_OK) {
        int error = wal->deferredError;
        wal->deferredError = SQLITE_OK;
        wal->length = 0;
        return error;
    }
    if (wal->length == 0) return SQLITE_OK;
    int length = wal->length;
    wal->length = 0;
    wal->issued += 1;
    return wal->real->pMethods->xWrite(wal->real, wal->gathered, length, wal->offset);
}

// MARK: the WAL file

static int walClose(sqlite3_file *file) {
    WALFile *wal = (WALFile *)file;
    int issued = issue(wal);
    if (wal->database != NULL && wal->database->wal == wal) wal->database->wal = NULL;
    int closed = wal->real->pMethods->xClose(wal->real);
    free(wal->gathered);
    wal->gathered = NULL;
    return issued != SQLITE_OK ? issued : closed;
}

static int walWrite(sqlite3_file *file, const void *bytes, int amount, sqlite3_int64 offset) {
    WALFile *wal = (WALFile *)file;
    wal->asked += 1;
    if (wal->deferredError == SQLITE_OK && wal->length > 0 && offset == wal->offset + wal->length
        && amount <= gatheredCapacity - wal->length) {
        memcpy(wal->gathered + wal->length, bytes, (size_t)amount);
        wal->length += amount;
        return SQLITE_OK;
    }
    int rc = issue(wal);
    if (rc != SQLITE_OK) return rc;
    if (wal->gathered == NULL) wal->gathered = malloc(gatheredCapacity);
    if (wal->gathered == NULL || amount > gatheredCapacity) {
        wal->issued += 1;
        return wal->real->pMethods->xWrite(wal->real, bytes, amount, offset);
    }
    memcpy(wal->gathered, bytes, (size_t)amount);
    wal->offset = offset;
    wal->length = amount;
    return SQLITE_OK;
}

// Whatever looks at or changes the file beyond appending to it sees every write made before.
#define ISSUE_THEN(call)                                   \
    WALFile *wal = (WALFile *)file;                        \
    int rc = issue(wal);                                   \
    if (rc != SQLITE_OK) return rc;                        \
    return call;

static int walRead(sqlite3_file *file, void *bytes, int amount, sqlite3_int64 offset) {
    ISSUE_THEN(wal->real->pMethods->xRead(wal->real, bytes, amount, offset))
}
static int walTruncate(sqlite3_file *file, sqlite3_int64 size) {
    ISSUE_THEN(wal->real->pMethods->xTruncate(wal->real, size))
}
static int walSync(sqlite3_file *file, int flags) { ISSUE_THEN(wal->real->pMethods->xSync(wal->real, flags)) }
static int walFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    ISSUE_THEN(wal->real->pMethods->xFileSize(wal->real, size))
}
static int walFileControl(sqlite3_file *file, int op, void *argument) {
    ISSUE_THEN(wal->real->pMethods->xFileControl(wal->real, op, argument))
}
static int walFetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **pointer) {
    ISSUE_THEN(wal->real->pMethods->xFetch(wal->real, offset, amount, pointer))
}

// MARK: forwarding, for both kinds of file (the real file follows `base` in both)

#define REAL(file) (((DatabaseFile *)(file))->real)
static int forwardLock(sqlite3_file *file, int level) { return REAL(file)->pMethods->xLock(REAL(file), level); }
static int forwardUnlock(sqlite3_file *file, int level) { return REAL(file)->pMethods->xUnlock(REAL(file), level); }
static int forwardCheckReservedLock(sqlite3_file *file, int *out) {
    return REAL(file)->pMethods->xCheckReservedLock(REAL(file), out);
}
static int forwardSectorSize(sqlite3_file *file) { return REAL(file)->pMethods->xSectorSize(REAL(file)); }
static int forwardDeviceCharacteristics(sqlite3_file *file) {
    return REAL(file)->pMethods->xDeviceCharacteristics(REAL(file));
}
static int forwardShmMap(sqlite3_file *file, int region, int size, int extend, void volatile **pointer) {
    return REAL(file)->pMethods->xShmMap(REAL(file), region, size, extend, pointer);
}
static int forwardShmLock(sqlite3_file *file, int offset, int count, int flags) {
    return REAL(file)->pMethods->xShmLock(REAL(file), offset, count, flags);
}
static void forwardShmBarrier(sqlite3_file *file) { REAL(file)->pMethods->xShmBarrier(REAL(file)); }
static int forwardShmUnmap(sqlite3_file *file, int deleteFlag) {
    return REAL(file)->pMethods->xShmUnmap(REAL(file), deleteFlag);
}
static int forwardUnfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    return REAL(file)->pMethods->xUnfetch(REAL(file), offset, pointer);
}

// MARK: the database file

static int databaseClose(sqlite3_file *file) {
    DatabaseFile *database = (DatabaseFile *)file;
    if (database->wal != NULL) database->wal->database = NULL;
    return database->real->pMethods->xClose(database->real);
}
static int databaseRead(sqlite3_file *file, void *bytes, int amount, sqlite3_int64 offset) {
    return REAL(file)->pMethods->xRead(REAL(file), bytes, amount, offset);
}
static int databaseWrite(sqlite3_file *file, const void *bytes, int amount, sqlite3_int64 offset) {
    return REAL(file)->pMethods->xWrite(REAL(file), bytes, amount, offset);
}
static int databaseTruncate(sqlite3_file *file, sqlite3_int64 size) {
    return REAL(file)->pMethods->xTruncate(REAL(file), size);
}
static int databaseSync(sqlite3_file *file, int flags) { return REAL(file)->pMethods->xSync(REAL(file), flags); }
static int databaseFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    return REAL(file)->pMethods->xFileSize(REAL(file), size);
}
static int databaseFileControl(sqlite3_file *file, int op, void *argument) {
    if (op == WD_FCNTL_WAL_WRITE_COUNTS) {
        WALFile *wal = ((DatabaseFile *)file)->wal;
        long long *counts = argument;
        counts[0] = wal != NULL ? wal->asked : 0;
        counts[1] = wal != NULL ? wal->issued : 0;
        return SQLITE_OK;
    }
    return REAL(file)->pMethods->xFileControl(REAL(file), op, argument);
}
static int databaseFetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **pointer) {
    return REAL(file)->pMethods->xFetch(REAL(file), offset, amount, pointer);
}

/// SQLite calls the barrier between writing the two copies of the WAL index header that make a commit's frames
/// visible to other connections: the frames reach the file first. With synchronous = FULL (workoutd's setting)
/// the WAL's sync has issued them already; a failure here cannot be returned, so the WAL's next call reports it.
static void databaseShmBarrier(sqlite3_file *file) {
    DatabaseFile *database = (DatabaseFile *)file;
    if (database->wal != NULL && database->wal->length > 0) {
        WALFile *wal = database->wal;
        int rc = issue(wal);
        if (rc != SQLITE_OK) wal->deferredError = rc;
    }
    database->real->pMethods->xShmBarrier(database->real);
}

// MARK: the VFS

static int gatheringOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *outFlags) {
    (void)vfs;
    if (flags & SQLITE_OPEN_WAL) {
        WALFile *wal = (WALFile *)file;
        memset(wal, 0, sizeof *wal);
        wal->real = (sqlite3_file *)(wal + 1);
        int rc = parentVFS->xOpen(parentVFS, name, wal->real, flags, outFlags);
        if (wal->real->pMethods == NULL) return rc;
        wal->base.pMethods = &walMethods;
        sqlite3_file *owner = name != NULL ? sqlite3_database_file_object(name) : NULL;
        if (owner != NULL && owner->pMethods == &databaseMethods) {
            wal->database = (DatabaseFile *)owner;
            wal->database->wal = wal;
        }
        return rc;
    }
    if (flags & SQLITE_OPEN_MAIN_DB) {
        DatabaseFile *database = (DatabaseFile *)file;
        memset(database, 0, sizeof *database);
        database->real = (sqlite3_file *)(database + 1);
        int rc = parentVFS->xOpen(parentVFS, name, database->real, flags, outFlags);
        database->base.pMethods = database->real->pMethods != NULL ? &databaseMethods : NULL;
        return rc;
    }
    // Anything else is SQLite's own file, in the same memory: its calls go straight to SQLite's methods.
    return parentVFS->xOpen(parentVFS, name, file, flags, outFlags);
}

static int gatheringDelete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    (void)vfs;
    return parentVFS->xDelete(parentVFS, name, syncDirectory);
}
static int gatheringAccess(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return parentVFS->xAccess(parentVFS, name, flags, out);
}
static int gatheringFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return parentVFS->xFullPathname(parentVFS, name, size, out);
}
static void *gatheringDlOpen(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return parentVFS->xDlOpen(parentVFS, name);
}
static void gatheringDlError(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    parentVFS->xDlError(parentVFS, size, out);
}
static void (*gatheringDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return parentVFS->xDlSym(parentVFS, handle, symbol);
}
static void gatheringDlClose(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    parentVFS->xDlClose(parentVFS, handle);
}
static int gatheringRandomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return parentVFS->xRandomness(parentVFS, size, out);
}
static int gatheringSleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return parentVFS->xSleep(parentVFS, microseconds);
}
static int gatheringCurrentTime(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return parentVFS->xCurrentTime(parentVFS, out);
}
static int gatheringGetLastError(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return parentVFS->xGetLastError(parentVFS, size, out);
}
static int gatheringCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return parentVFS->xCurrentTimeInt64(parentVFS, out);
}

static pthread_once_t installOnce = PTHREAD_ONCE_INIT;
static int installResult = SQLITE_ERROR;

static void install(void) {
    if (sqlite3_initialize() != SQLITE_OK) return;
    parentVFS = sqlite3_vfs_find(NULL);
    if (parentVFS == NULL || parentVFS->iVersion < 2) return;
    int largest = (int)(sizeof(WALFile) > sizeof(DatabaseFile) ? sizeof(WALFile) : sizeof(DatabaseFile));
    gatheringVFS = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = largest + parentVFS->szOsFile,
        .mxPathname = parentVFS->mxPathname,
        .zName = "workoutd-wal-gathering",
        .xOpen = gatheringOpen,
        .xDelete = gatheringDelete,
        .xAccess = gatheringAccess,
        .xFullPathname = gatheringFullPathname,
        .xDlOpen = gatheringDlOpen,
        .xDlError = gatheringDlError,
        .xDlSym = gatheringDlSym,
        .xDlClose = gatheringDlClose,
        .xRandomness = gatheringRandomness,
        .xSleep = gatheringSleep,
        .xCurrentTime = gatheringCurrentTime,
        .xGetLastError = gatheringGetLastError,
        .xCurrentTimeInt64 = gatheringCurrentTimeInt64,
    };
    walMethods = (sqlite3_io_methods){
        .iVersion = 3,
        .xClose = walClose, .xRead = walRead, .xWrite = walWrite, .xTruncate = walTruncate, .xSync = walSync,
        .xFileSize = walFileSize, .xLock = forwardLock, .xUnlock = forwardUnlock,
        .xCheckReservedLock = forwardCheckReservedLock, .xFileControl = walFileControl,
        .xSectorSize = forwardSectorSize, .xDeviceCharacteristics = forwardDeviceCharacteristics,
        .xShmMap = forwardShmMap, .xShmLock = forwardShmLock, .xShmBarrier = forwardShmBarrier,
        .xShmUnmap = forwardShmUnmap, .xFetch = walFetch, .xUnfetch = forwardUnfetch,
    };
    databaseMethods = (sqlite3_io_methods){
        .iVersion = 3,
        .xClose = databaseClose, .xRead = databaseRead, .xWrite = databaseWrite, .xTruncate = databaseTruncate,
        .xSync = databaseSync, .xFileSize = databaseFileSize, .xLock = forwardLock, .xUnlock = forwardUnlock,
        .xCheckReservedLock = forwardCheckReservedLock, .xFileControl = databaseFileControl,
        .xSectorSize = forwardSectorSize, .xDeviceCharacteristics = forwardDeviceCharacteristics,
        .xShmMap = forwardShmMap, .xShmLock = forwardShmLock, .xShmBarrier = databaseShmBarrier,
        .xShmUnmap = forwardShmUnmap, .xFetch = databaseFetch, .xUnfetch = forwardUnfetch,
    };
    installResult = sqlite3_vfs_register(&gatheringVFS, 1);
}

int wd_wal_write_gathering_install(void) {
    pthread_once(&installOnce, install);
    return installResult;
}

int wd_wal_write_counts(void *connection, long long *asked, long long *issued) {
    long long counts[2] = {0, 0};
    int rc = sqlite3_file_control(connection, "main", WD_FCNTL_WAL_WRITE_COUNTS, counts);
    *asked = counts[0];
    *issued = counts[1];
    return rc;
}
