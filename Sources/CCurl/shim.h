#ifndef WXDB_CCURL_SHIM_H
#define WXDB_CCURL_SHIM_H
#include <curl/curl.h>
#include <dlfcn.h>
#include <stddef.h>

// libcurl is opened with dlopen the first time wxdb fetches, not linked: linking it loads its ~40
// libraries (OpenSSL, GnuTLS, Kerberos, LDAP ...) into every process, about 4 ms of CPU at each
// start, and most wxdb commands never fetch. Only the header is used at build time.
//
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed wrapper
// per kind of argument wxdb passes. CURL_GLOBAL_DEFAULT is a macro Swift cannot import.

static inline void *wxdb_curl_symbol(const char *name) {
    static void *library = NULL;
    if (library == NULL) library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) library = dlopen("libcurl.so", RTLD_NOW | RTLD_LOCAL);
#ifdef __APPLE__
    if (library == NULL) library = dlopen("libcurl.4.dylib", RTLD_NOW | RTLD_LOCAL);
#endif
    return library == NULL ? NULL : dlsym(library, name);
}

/// Whether libcurl could be opened (Debian's libcurl4 installed).
static inline int wxdb_curl_available(void) { return wxdb_curl_symbol("curl_easy_init") != NULL; }

#define WXDB_CURL_FN(type, name) ((type)wxdb_curl_symbol(#name))

static inline CURLcode wxdb_curl_global_init(void) {
    CURLcode (*f)(long) = WXDB_CURL_FN(CURLcode(*)(long), curl_global_init);
    return f ? f(CURL_GLOBAL_DEFAULT) : CURLE_FAILED_INIT;
}
static inline CURL *wxdb_curl_easy_init(void) {
    CURL *(*f)(void) = WXDB_CURL_FN(CURL * (*)(void), curl_easy_init);
    return f ? f() : NULL;
}
static inline void wxdb_curl_easy_cleanup(CURL *h) {
    void (*f)(CURL *) = WXDB_CURL_FN(void (*)(CURL *), curl_easy_cleanup);
    if (f) f(h);
}
static inline void wxdb_curl_easy_reset(CURL *h) {
    void (*f)(CURL *) = WXDB_CURL_FN(void (*)(CURL *), curl_easy_reset);
    if (f) f(h);
}
static inline CURLcode wxdb_curl_easy_perform(CURL *h) {
    CURLcode (*f)(CURL *) = WXDB_CURL_FN(CURLcode(*)(CURL *), curl_easy_perform);
    return f ? f(h) : CURLE_FAILED_INIT;
}
static inline const char *wxdb_curl_easy_strerror(CURLcode code) {
    const char *(*f)(CURLcode) = WXDB_CURL_FN(const char *(*)(CURLcode), curl_easy_strerror);
    return f ? f(code) : "libcurl is not available";
}
static inline struct curl_slist *wxdb_curl_slist_append(struct curl_slist *list, const char *text) {
    struct curl_slist *(*f)(struct curl_slist *, const char *) =
        WXDB_CURL_FN(struct curl_slist * (*)(struct curl_slist *, const char *), curl_slist_append);
    return f ? f(list, text) : list;
}
static inline void wxdb_curl_slist_free_all(struct curl_slist *list) {
    void (*f)(struct curl_slist *) = WXDB_CURL_FN(void (*)(struct curl_slist *), curl_slist_free_all);
    if (f) f(list);
}

typedef CURLcode (*wxdb_curl_setopt_fn)(CURL *, CURLoption, ...);
typedef CURLcode (*wxdb_curl_getinfo_fn)(CURL *, CURLINFO, ...);

static inline CURLcode wxdb_curl_set_long(CURL *h, CURLoption o, long v) {
    wxdb_curl_setopt_fn f = WXDB_CURL_FN(wxdb_curl_setopt_fn, curl_easy_setopt);
    return f ? f(h, o, v) : CURLE_FAILED_INIT;
}
static inline CURLcode wxdb_curl_set_pointer(CURL *h, CURLoption o, void *v) {
    wxdb_curl_setopt_fn f = WXDB_CURL_FN(wxdb_curl_setopt_fn, curl_easy_setopt);
    return f ? f(h, o, v) : CURLE_FAILED_INIT;
}
static inline CURLcode wxdb_curl_set_string(CURL *h, CURLoption o, const char *v) {
    wxdb_curl_setopt_fn f = WXDB_CURL_FN(wxdb_curl_setopt_fn, curl_easy_setopt);
    return f ? f(h, o, v) : CURLE_FAILED_INIT;
}
static inline CURLcode wxdb_curl_set_write(CURL *h, CURLoption o, curl_write_callback v) {
    wxdb_curl_setopt_fn f = WXDB_CURL_FN(wxdb_curl_setopt_fn, curl_easy_setopt);
    return f ? f(h, o, v) : CURLE_FAILED_INIT;
}
static inline CURLcode wxdb_curl_set_xferinfo(CURL *h, curl_xferinfo_callback v) {
    wxdb_curl_setopt_fn f = WXDB_CURL_FN(wxdb_curl_setopt_fn, curl_easy_setopt);
    return f ? f(h, CURLOPT_XFERINFOFUNCTION, v) : CURLE_FAILED_INIT;
}
static inline CURLcode wxdb_curl_info_long(CURL *h, CURLINFO i, long *v) {
    wxdb_curl_getinfo_fn f = WXDB_CURL_FN(wxdb_curl_getinfo_fn, curl_easy_getinfo);
    return f ? f(h, i, v) : CURLE_FAILED_INIT;
}
static inline CURLcode wxdb_curl_info_off(CURL *h, CURLINFO i, curl_off_t *v) {
    wxdb_curl_getinfo_fn f = WXDB_CURL_FN(wxdb_curl_getinfo_fn, curl_easy_getinfo);
    return f ? f(h, i, v) : CURLE_FAILED_INIT;
}
#endif
