#ifndef WXDB_CSQLITE_SHIM_H
#define WXDB_CSQLITE_SHIM_H
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

// libsqlite3 is opened with dlopen when wxdb first opens a SQLite file, not linked (as libcurl, zlib
// and libpq are): loading it costs every process about 0.5 ms of CPU at start-up (0.28x sqlite3
// --version), which commands that open no SQLite file (--version, --help, usage errors, a PostgreSQL
// database) need not pay; a command that opens one pays the same as before, once. Only the header is
// used at build time.
//
// The header's declarations of the functions wxdb calls are renamed out of the way, so the wrappers
// below can take their names and the Swift code calls sqlite3_step and the others as before.
#define sqlite3_bind_blob wxdb_linked_sqlite3_bind_blob
#define sqlite3_bind_double wxdb_linked_sqlite3_bind_double
#define sqlite3_bind_int64 wxdb_linked_sqlite3_bind_int64
#define sqlite3_bind_null wxdb_linked_sqlite3_bind_null
#define sqlite3_bind_parameter_count wxdb_linked_sqlite3_bind_parameter_count
#define sqlite3_bind_text wxdb_linked_sqlite3_bind_text
#define sqlite3_busy_timeout wxdb_linked_sqlite3_busy_timeout
#define sqlite3_changes wxdb_linked_sqlite3_changes
#define sqlite3_clear_bindings wxdb_linked_sqlite3_clear_bindings
#define sqlite3_close_v2 wxdb_linked_sqlite3_close_v2
#define sqlite3_column_blob wxdb_linked_sqlite3_column_blob
#define sqlite3_column_bytes wxdb_linked_sqlite3_column_bytes
#define sqlite3_column_count wxdb_linked_sqlite3_column_count
#define sqlite3_column_double wxdb_linked_sqlite3_column_double
#define sqlite3_column_int64 wxdb_linked_sqlite3_column_int64
#define sqlite3_column_name wxdb_linked_sqlite3_column_name
#define sqlite3_column_text wxdb_linked_sqlite3_column_text
#define sqlite3_column_type wxdb_linked_sqlite3_column_type
#define sqlite3_errmsg wxdb_linked_sqlite3_errmsg
#define sqlite3_errstr wxdb_linked_sqlite3_errstr
#define sqlite3_exec wxdb_linked_sqlite3_exec
#define sqlite3_extended_errcode wxdb_linked_sqlite3_extended_errcode
#define sqlite3_extended_result_codes wxdb_linked_sqlite3_extended_result_codes
#define sqlite3_finalize wxdb_linked_sqlite3_finalize
#define sqlite3_free wxdb_linked_sqlite3_free
#define sqlite3_get_autocommit wxdb_linked_sqlite3_get_autocommit
#define sqlite3_interrupt wxdb_linked_sqlite3_interrupt
#define sqlite3_last_insert_rowid wxdb_linked_sqlite3_last_insert_rowid
#define sqlite3_libversion wxdb_linked_sqlite3_libversion
#define sqlite3_limit wxdb_linked_sqlite3_limit
#define sqlite3_open_v2 wxdb_linked_sqlite3_open_v2
#define sqlite3_prepare_v3 wxdb_linked_sqlite3_prepare_v3
#define sqlite3_progress_handler wxdb_linked_sqlite3_progress_handler
#define sqlite3_reset wxdb_linked_sqlite3_reset
#define sqlite3_step wxdb_linked_sqlite3_step
#include <sqlite3.h>
#undef sqlite3_bind_blob
#undef sqlite3_bind_double
#undef sqlite3_bind_int64
#undef sqlite3_bind_null
#undef sqlite3_bind_parameter_count
#undef sqlite3_bind_text
#undef sqlite3_busy_timeout
#undef sqlite3_changes
#undef sqlite3_clear_bindings
#undef sqlite3_close_v2
#undef sqlite3_column_blob
#undef sqlite3_column_bytes
#undef sqlite3_column_count
#undef sqlite3_column_double
#undef sqlite3_column_int64
#undef sqlite3_column_name
#undef sqlite3_column_text
#undef sqlite3_column_type
#undef sqlite3_errmsg
#undef sqlite3_errstr
#undef sqlite3_exec
#undef sqlite3_extended_errcode
#undef sqlite3_extended_result_codes
#undef sqlite3_finalize
#undef sqlite3_free
#undef sqlite3_get_autocommit
#undef sqlite3_interrupt
#undef sqlite3_last_insert_rowid
#undef sqlite3_libversion
#undef sqlite3_limit
#undef sqlite3_open_v2
#undef sqlite3_prepare_v3
#undef sqlite3_progress_handler
#undef sqlite3_reset
#undef sqlite3_step

// SQLITE_TRANSIENT is a macro cast Swift cannot import.
static inline sqlite3_destructor_type wxdb_sqlite_transient(void) { return SQLITE_TRANSIENT; }

/// The library, opened at the first call (NULL if it cannot be: Debian's libsqlite3-0 missing).
/// Threads may race to open it; dlopen hands each the same handle.
static inline void *wxdb_sqlite_library(void) {
    static void *library = NULL;
    void *handle = __atomic_load_n(&library, __ATOMIC_ACQUIRE);
    if (handle == NULL) {
#ifdef __APPLE__
        handle = dlopen("libsqlite3.dylib", RTLD_NOW | RTLD_LOCAL);
#else
        handle = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL) handle = dlopen("libsqlite3.so", RTLD_NOW | RTLD_LOCAL);
#endif
        if (handle != NULL) __atomic_store_n(&library, handle, __ATOMIC_RELEASE);
    }
    return handle;
}

/// Why the library could not be opened, as a message for an `Error:` line.
static inline const char *wxdb_sqlite_missing_message(void) {
    return "SQLite's library (libsqlite3.so.0) could not be opened: install it (Debian/Ubuntu: "
           "sudo apt-get install libsqlite3-0) and run the command again";
}

static inline void *wxdb_sqlite_resolve(void **cache, const char *name) {
    void *function = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (function == NULL) {
        void *library = wxdb_sqlite_library();
        function = library == NULL ? NULL : dlsym(library, name);
        if (function == NULL) {
            // Only sqlite3_open_v2, sqlite3_errstr and sqlite3_libversion run without a handle,
            // and they answer without the library; reaching here is a bug or a broken libsqlite3.
            fprintf(stderr, "Error: %s (missing %s)\n", wxdb_sqlite_missing_message(), name);
            exit(1);
        }
        __atomic_store_n(cache, function, __ATOMIC_RELEASE);
    }
    return function;
}

#define WXDB_SQLITE_CALL(type, name, ...)                                                                   \
    static void *cache = NULL;                                                                          \
    return ((type)wxdb_sqlite_resolve(&cache, #name))(__VA_ARGS__)
#define WXDB_SQLITE_CALL_VOID(type, name, ...)                                                              \
    static void *cache = NULL;                                                                          \
    ((type)wxdb_sqlite_resolve(&cache, #name))(__VA_ARGS__)

static inline int sqlite3_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs) {
    if (wxdb_sqlite_library() == NULL) {
        *db = NULL;
        return SQLITE_CANTOPEN;
    }
    WXDB_SQLITE_CALL(int (*)(const char *, sqlite3 **, int, const char *), sqlite3_open_v2, filename, db, flags, vfs);
}
static inline const char *sqlite3_errstr(int code) {
    if (wxdb_sqlite_library() == NULL) return wxdb_sqlite_missing_message();
    WXDB_SQLITE_CALL(const char *(*)(int), sqlite3_errstr, code);
}
static inline const char *sqlite3_libversion(void) {
    static void *cache = NULL;
    if (wxdb_sqlite_library() == NULL) return "none (libsqlite3.so.0 could not be opened)";
    return ((const char *(*)(void))wxdb_sqlite_resolve(&cache, "sqlite3_libversion"))();
}
static inline int sqlite3_bind_blob(sqlite3_stmt *s, int i, const void *v, int n, void (*d)(void *)) {
    WXDB_SQLITE_CALL(int (*)(sqlite3_stmt *, int, const void *, int, void (*)(void *)), sqlite3_bind_blob, s, i, v, n, d);
}
static inline int sqlite3_bind_double(sqlite3_stmt *s, int i, double v) {
    WXDB_SQLITE_CALL(int (*)(sqlite3_stmt *, int, double), sqlite3_bind_double, s, i, v);
}
static inline int sqlite3_bind_int64(sqlite3_stmt *s, int i, sqlite3_int64 v) {
    WXDB_SQLITE_CALL(int (*)(sqlite3_stmt *, int, sqlite3_int64), sqlite3_bind_int64, s, i, v);
}
static inline int sqlite3_bind_null(sqlite3_stmt *s, int i) {
    WXDB_SQLITE_CALL(int (*)(sqlite3_stmt *, int), sqlite3_bind_null, s, i);
}
static inline int sqlite3_bind_parameter_count(sqlite3_stmt *s) {
    WXDB_SQLITE_CALL(int (*)(sqlite3_stmt *), sqlite3_bind_parameter_count, s);
}
static inline int sqlite3_bind_text(sqlite3_stmt *s, int i, const char *v, int n, void (*d)(void *)) {
    WXDB_SQLITE_CALL(int (*)(sqlite3_stmt *, int, const char *, int, void (*)(void *)), sqlite3_bind_text, s, i, v, n, d);
}
static inline int sqlite3_busy_timeout(sqlite3 *db, int ms) {
    WXDB_SQLITE_CALL(int (*)(sqlite3 *, int), sqlite3_busy_timeout, db, ms);
}
static inline int sqlite3_changes(sqlite3 *db) { WXDB_SQLITE_CALL(int (*)(sqlite3 *), sqlite3_changes, db); }
static inline int sqlite3_clear_bindings(sqlite3_stmt *s) {
    WXDB_SQLITE_CALL(int (*)(sqlite3_stmt *), sqlite3_clear_bindings, s);
}
static inline int sqlite3_close_v2(sqlite3 *db) { WXDB_SQLITE_CALL(int (*)(sqlite3 *), sqlite3_close_v2, db); }
static inline const void *sqlite3_column_blob(sqlite3_stmt *s, int i) {
    WXDB_SQLITE_CALL(const void *(*)(sqlite3_stmt *, int), sqlite3_column_blob, s, i);
}
static inline int sqlite3_column_bytes(sqlite3_stmt *s, int i) {
    WXDB_SQLITE_CALL(int (*)(sqlite3_stmt *, int), sqlite3_column_bytes, s, i);
}
static inline int sqlite3_column_count(sqlite3_stmt *s) {
    WXDB_SQLITE_CALL(int (*)(sqlite3_stmt *), sqlite3_column_count, s);
}
static inline double sqlite3_column_double(sqlite3_stmt *s, int i) {
    WXDB_SQLITE_CALL(double (*)(sqlite3_stmt *, int), sqlite3_column_double, s, i);
}
static inline sqlite3_int64 sqlite3_column_int64(sqlite3_stmt *s, int i) {
    WXDB_SQLITE_CALL(sqlite3_int64 (*)(sqlite3_stmt *, int), sqlite3_column_int64, s, i);
}
static inline const char *sqlite3_column_name(sqlite3_stmt *s, int i) {
    WXDB_SQLITE_CALL(const char *(*)(sqlite3_stmt *, int), sqlite3_column_name, s, i);
}
static inline const unsigned char *sqlite3_column_text(sqlite3_stmt *s, int i) {
    WXDB_SQLITE_CALL(const unsigned char *(*)(sqlite3_stmt *, int), sqlite3_column_text, s, i);
}
static inline int sqlite3_column_type(sqlite3_stmt *s, int i) {
    WXDB_SQLITE_CALL(int (*)(sqlite3_stmt *, int), sqlite3_column_type, s, i);
}
static inline const char *sqlite3_errmsg(sqlite3 *db) {
    WXDB_SQLITE_CALL(const char *(*)(sqlite3 *), sqlite3_errmsg, db);
}
static inline int sqlite3_exec(sqlite3 *db, const char *sql, int (*callback)(void *, int, char **, char **),
                               void *argument, char **error) {
    WXDB_SQLITE_CALL(int (*)(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *, char **),
                     sqlite3_exec, db, sql, callback, argument, error);
}
static inline int sqlite3_extended_errcode(sqlite3 *db) {
    WXDB_SQLITE_CALL(int (*)(sqlite3 *), sqlite3_extended_errcode, db);
}
static inline int sqlite3_extended_result_codes(sqlite3 *db, int on) {
    WXDB_SQLITE_CALL(int (*)(sqlite3 *, int), sqlite3_extended_result_codes, db, on);
}
static inline int sqlite3_finalize(sqlite3_stmt *s) { WXDB_SQLITE_CALL(int (*)(sqlite3_stmt *), sqlite3_finalize, s); }
static inline void sqlite3_free(void *p) { WXDB_SQLITE_CALL_VOID(void (*)(void *), sqlite3_free, p); }
static inline int sqlite3_get_autocommit(sqlite3 *db) {
    WXDB_SQLITE_CALL(int (*)(sqlite3 *), sqlite3_get_autocommit, db);
}
static inline void sqlite3_interrupt(sqlite3 *db) { WXDB_SQLITE_CALL_VOID(void (*)(sqlite3 *), sqlite3_interrupt, db); }
static inline sqlite3_int64 sqlite3_last_insert_rowid(sqlite3 *db) {
    WXDB_SQLITE_CALL(sqlite3_int64 (*)(sqlite3 *), sqlite3_last_insert_rowid, db);
}
static inline int sqlite3_limit(sqlite3 *db, int id, int value) {
    WXDB_SQLITE_CALL(int (*)(sqlite3 *, int, int), sqlite3_limit, db, id, value);
}
static inline int sqlite3_prepare_v3(sqlite3 *db, const char *sql, int bytes, unsigned int flags, sqlite3_stmt **statement,
                                     const char **tail) {
    WXDB_SQLITE_CALL(int (*)(sqlite3 *, const char *, int, unsigned int, sqlite3_stmt **, const char **),
                     sqlite3_prepare_v3, db, sql, bytes, flags, statement, tail);
}
static inline void sqlite3_progress_handler(sqlite3 *db, int steps, int (*handler)(void *), void *argument) {
    WXDB_SQLITE_CALL_VOID(void (*)(sqlite3 *, int, int (*)(void *), void *), sqlite3_progress_handler, db, steps, handler,
                     argument);
}
static inline int sqlite3_reset(sqlite3_stmt *s) { WXDB_SQLITE_CALL(int (*)(sqlite3_stmt *), sqlite3_reset, s); }
static inline int sqlite3_step(sqlite3_stmt *s) { WXDB_SQLITE_CALL(int (*)(sqlite3_stmt *), sqlite3_step, s); }
#endif
