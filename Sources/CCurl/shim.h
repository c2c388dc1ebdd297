#ifndef WXDB_CCURL_SHIM_H
#define WXDB_CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per kind of argument wxdb passes. CURL_GLOBAL_DEFAULT is a macro Swift cannot import.
static inline CURLcode wxdb_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }
static inline CURLcode wxdb_curl_set_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode wxdb_curl_set_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode wxdb_curl_set_string(CURL *h, CURLoption o, const char *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode wxdb_curl_set_write(CURL *h, CURLoption o, curl_write_callback f) {
    return curl_easy_setopt(h, o, f);
}
static inline CURLcode wxdb_curl_set_xferinfo(CURL *h, curl_xferinfo_callback f) {
    return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, f);
}
static inline CURLcode wxdb_curl_info_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode wxdb_curl_info_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
#endif
