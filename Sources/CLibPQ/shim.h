#ifndef WXDB_CLIBPQ_SHIM_H
#define WXDB_CLIBPQ_SHIM_H
#if __has_include(<postgresql/libpq-fe.h>)
#include <postgresql/libpq-fe.h>
#else
#include <libpq-fe.h>
#endif
#include <dlfcn.h>
#include <stddef.h>

// libpq is opened with dlopen at the first PostgreSQL connection, not linked: linking it loads
// OpenSSL, GSSAPI/Kerberos and LDAP into every wxdb process, and SQLite commands (the default,
// and the ones that must start as fast as sqlite3) never talk to a server. Only the header is
// used at build time; Swift calls the wxdb_pq_* wrappers below, never libpq's own symbols.

static inline void *wxdb_pq_symbol(const char *name) {
    static void *library = NULL;
    if (library == NULL) library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) library = dlopen("libpq.so", RTLD_NOW | RTLD_LOCAL);
#ifdef __APPLE__
    if (library == NULL) library = dlopen("libpq.5.dylib", RTLD_NOW | RTLD_LOCAL);
#endif
    return library == NULL ? NULL : dlsym(library, name);
}

/// Whether libpq could be opened (Debian's libpq5 installed).
static inline int wxdb_pq_available(void) { return wxdb_pq_symbol("PQconnectdb") != NULL; }

// Each call site looks its symbol up once (dlsym is a hash lookup and string compare per call,
// a few per cent of an ingest's CPU when done for every libpq call).
#define WXDB_PQ_FN(type, name)                                                   \
    ({                                                                           \
        static void *wxdb_pq_cached = NULL;                                      \
        void *wxdb_pq_found = __atomic_load_n(&wxdb_pq_cached, __ATOMIC_RELAXED); \
        if (wxdb_pq_found == NULL) {                                             \
            wxdb_pq_found = wxdb_pq_symbol(#name);                               \
            __atomic_store_n(&wxdb_pq_cached, wxdb_pq_found, __ATOMIC_RELAXED);  \
        }                                                                        \
        (type) wxdb_pq_found;                                                    \
    })

static inline PGconn *wxdb_pq_connectdb(const char *conninfo) {
    PGconn *(*f)(const char *) = WXDB_PQ_FN(PGconn * (*)(const char *), PQconnectdb);
    return f ? f(conninfo) : NULL;
}
static inline ConnStatusType wxdb_pq_status(const PGconn *c) {
    ConnStatusType (*f)(const PGconn *) = WXDB_PQ_FN(ConnStatusType(*)(const PGconn *), PQstatus);
    return f ? f(c) : CONNECTION_BAD;
}
static inline PGTransactionStatusType wxdb_pq_transaction_status(const PGconn *c) {
    PGTransactionStatusType (*f)(const PGconn *) =
        WXDB_PQ_FN(PGTransactionStatusType(*)(const PGconn *), PQtransactionStatus);
    return f ? f(c) : PQTRANS_UNKNOWN;
}
static inline const char *wxdb_pq_error_message(const PGconn *c) {
    char *(*f)(const PGconn *) = WXDB_PQ_FN(char *(*)(const PGconn *), PQerrorMessage);
    return f ? f(c) : "libpq is not available";
}
static inline void wxdb_pq_finish(PGconn *c) {
    void (*f)(PGconn *) = WXDB_PQ_FN(void (*)(PGconn *), PQfinish);
    if (f) f(c);
}
// PQreset closes the connection and opens it again with the same parameters (a server restart
// ends every session; wxdb reconnects only between transactions, see PostgresConnection).
static inline void wxdb_pq_reset(PGconn *c) {
    void (*f)(PGconn *) = WXDB_PQ_FN(void (*)(PGconn *), PQreset);
    if (f) f(c);
}
// Reads what the server sent while the connection was idle without waiting: a session the server
// ended (a restart, pg_terminate_backend) then shows as CONNECTION_BAD before a statement is sent.
static inline int wxdb_pq_consume_input(PGconn *c) {
    int (*f)(PGconn *) = WXDB_PQ_FN(int (*)(PGconn *), PQconsumeInput);
    return f ? f(c) : 0;
}
static inline int wxdb_pq_server_version(const PGconn *c) {
    int (*f)(const PGconn *) = WXDB_PQ_FN(int (*)(const PGconn *), PQserverVersion);
    return f ? f(c) : 0;
}
static inline int wxdb_pq_backend_pid(const PGconn *c) {
    int (*f)(const PGconn *) = WXDB_PQ_FN(int (*)(const PGconn *), PQbackendPID);
    return f ? f(c) : 0;
}
static inline int wxdb_pq_lib_version(void) {
    int (*f)(void) = WXDB_PQ_FN(int (*)(void), PQlibVersion);
    return f ? f() : 0;
}

// libpq's default notice processor prints every NOTICE ("relation ... already exists, skipping")
// to stderr; wxdb's output is its own, so notices are dropped.
static inline void wxdb_pq_ignore_notice(void *arg, const char *message) {
    (void)arg;
    (void)message;
}
static inline void wxdb_pq_silence_notices(PGconn *c) {
    PQnoticeProcessor (*f)(PGconn *, PQnoticeProcessor, void *) =
        WXDB_PQ_FN(PQnoticeProcessor(*)(PGconn *, PQnoticeProcessor, void *), PQsetNoticeProcessor);
    if (f) f(c, wxdb_pq_ignore_notice, NULL);
}

static inline PGresult *wxdb_pq_exec(PGconn *c, const char *sql) {
    PGresult *(*f)(PGconn *, const char *) = WXDB_PQ_FN(PGresult * (*)(PGconn *, const char *), PQexec);
    return f ? f(c, sql) : NULL;
}
typedef PGresult *(*wxdb_pq_exec_params_fn)(PGconn *, const char *, int, const Oid *, const char *const *,
                                             const int *, const int *, int);
static inline PGresult *wxdb_pq_exec_params(PGconn *c, const char *sql, int n, const char *const *values) {
    wxdb_pq_exec_params_fn f = WXDB_PQ_FN(wxdb_pq_exec_params_fn, PQexecParams);
    return f ? f(c, sql, n, NULL, values, NULL, NULL, 0) : NULL;
}
typedef int (*wxdb_pq_send_params_fn)(PGconn *, const char *, int, const Oid *, const char *const *, const int *,
                                      const int *, int);
static inline int wxdb_pq_send_query_params(PGconn *c, const char *sql, int n, const char *const *values) {
    wxdb_pq_send_params_fn f = WXDB_PQ_FN(wxdb_pq_send_params_fn, PQsendQueryParams);
    return f ? f(c, sql, n, NULL, values, NULL, NULL, 0) : 0;
}
// Statements every run repeats are prepared once per session and then executed by name (no
// parse and plan per call); the parameters' types are inferred as for PQexecParams.
typedef PGresult *(*wxdb_pq_prepare_fn)(PGconn *, const char *, const char *, int, const Oid *);
static inline PGresult *wxdb_pq_prepare(PGconn *c, const char *name, const char *sql, int n) {
    wxdb_pq_prepare_fn f = WXDB_PQ_FN(wxdb_pq_prepare_fn, PQprepare);
    return f ? f(c, name, sql, n, NULL) : NULL;
}
typedef PGresult *(*wxdb_pq_exec_prepared_fn)(PGconn *, const char *, int, const char *const *, const int *,
                                               const int *, int);
static inline PGresult *wxdb_pq_exec_prepared(PGconn *c, const char *name, int n, const char *const *values) {
    wxdb_pq_exec_prepared_fn f = WXDB_PQ_FN(wxdb_pq_exec_prepared_fn, PQexecPrepared);
    return f ? f(c, name, n, values, NULL, NULL, 0) : NULL;
}
typedef int (*wxdb_pq_send_prepared_fn)(PGconn *, const char *, int, const char *const *, const int *, const int *,
                                        int);
static inline int wxdb_pq_send_query_prepared(PGconn *c, const char *name, int n, const char *const *values) {
    wxdb_pq_send_prepared_fn f = WXDB_PQ_FN(wxdb_pq_send_prepared_fn, PQsendQueryPrepared);
    return f ? f(c, name, n, values, NULL, NULL, 0) : 0;
}
static inline int wxdb_pq_set_single_row_mode(PGconn *c) {
    int (*f)(PGconn *) = WXDB_PQ_FN(int (*)(PGconn *), PQsetSingleRowMode);
    return f ? f(c) : 0;
}
static inline PGresult *wxdb_pq_get_result(PGconn *c) {
    PGresult *(*f)(PGconn *) = WXDB_PQ_FN(PGresult * (*)(PGconn *), PQgetResult);
    return f ? f(c) : NULL;
}
static inline ExecStatusType wxdb_pq_result_status(const PGresult *r) {
    ExecStatusType (*f)(const PGresult *) = WXDB_PQ_FN(ExecStatusType(*)(const PGresult *), PQresultStatus);
    return f ? f(r) : PGRES_FATAL_ERROR;
}
static inline const char *wxdb_pq_result_error_field(const PGresult *r, int code) {
    char *(*f)(const PGresult *, int) = WXDB_PQ_FN(char *(*)(const PGresult *, int), PQresultErrorField);
    return f ? f(r, code) : NULL;
}
static inline const char *wxdb_pq_result_error_message(const PGresult *r) {
    char *(*f)(const PGresult *) = WXDB_PQ_FN(char *(*)(const PGresult *), PQresultErrorMessage);
    return f ? f(r) : "libpq is not available";
}
static inline void wxdb_pq_clear(PGresult *r) {
    void (*f)(PGresult *) = WXDB_PQ_FN(void (*)(PGresult *), PQclear);
    if (f) f(r);
}
static inline int wxdb_pq_ntuples(const PGresult *r) {
    int (*f)(const PGresult *) = WXDB_PQ_FN(int (*)(const PGresult *), PQntuples);
    return f ? f(r) : 0;
}
static inline int wxdb_pq_nfields(const PGresult *r) {
    int (*f)(const PGresult *) = WXDB_PQ_FN(int (*)(const PGresult *), PQnfields);
    return f ? f(r) : 0;
}
static inline const char *wxdb_pq_getvalue(const PGresult *r, int row, int column) {
    char *(*f)(const PGresult *, int, int) = WXDB_PQ_FN(char *(*)(const PGresult *, int, int), PQgetvalue);
    return f ? f(r, row, column) : "";
}
static inline int wxdb_pq_getisnull(const PGresult *r, int row, int column) {
    int (*f)(const PGresult *, int, int) = WXDB_PQ_FN(int (*)(const PGresult *, int, int), PQgetisnull);
    return f ? f(r, row, column) : 1;
}
static inline int wxdb_pq_getlength(const PGresult *r, int row, int column) {
    int (*f)(const PGresult *, int, int) = WXDB_PQ_FN(int (*)(const PGresult *, int, int), PQgetlength);
    return f ? f(r, row, column) : 0;
}
static inline const char *wxdb_pq_cmd_tuples(PGresult *r) {
    char *(*f)(PGresult *) = WXDB_PQ_FN(char *(*)(PGresult *), PQcmdTuples);
    return f ? f(r) : "";
}
static inline int wxdb_pq_put_copy_data(PGconn *c, const char *buffer, int count) {
    int (*f)(PGconn *, const char *, int) = WXDB_PQ_FN(int (*)(PGconn *, const char *, int), PQputCopyData);
    return f ? f(c, buffer, count) : -1;
}
static inline int wxdb_pq_put_copy_end(PGconn *c, const char *error) {
    int (*f)(PGconn *, const char *) = WXDB_PQ_FN(int (*)(PGconn *, const char *), PQputCopyEnd);
    return f ? f(c, error) : -1;
}

/// Asks the server to stop the statement running on `c` (a stream its reader left early).
static inline int wxdb_pq_cancel(PGconn *c) {
    PGcancel *(*get)(PGconn *) = WXDB_PQ_FN(PGcancel * (*)(PGconn *), PQgetCancel);
    int (*cancel)(PGcancel *, char *, int) = WXDB_PQ_FN(int (*)(PGcancel *, char *, int), PQcancel);
    void (*free_cancel)(PGcancel *) = WXDB_PQ_FN(void (*)(PGcancel *), PQfreeCancel);
    if (!get || !cancel || !free_cancel) return 0;
    PGcancel *handle = get(c);
    if (handle == NULL) return 0;
    char message[256];
    int ok = cancel(handle, message, (int)sizeof message);
    free_cancel(handle);
    return ok;
}
#endif
