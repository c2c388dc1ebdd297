#ifndef WXDB_CZLIB_SHIM_H
#define WXDB_CZLIB_SHIM_H
#include <dlfcn.h>
#include <zlib.h>

// zlib is opened with dlopen the first time wxdb unpacks a gzip file (station downloads), not
// linked: loading it costs every process about 0.2 ms of CPU at start-up, and most commands never
// unpack anything. Only the header is used at build time. inflateInit2 is a macro Swift cannot
// import; the gzip wrapper needs windowBits 15 + 16. Ensemble member blobs (Sources/StoreSQLite/
// MemberBlob.swift) use the one-shot zlib-format calls at the end.

static inline void *wxdb_zlib_symbol(const char *name) {
    static void *library = NULL;
    if (library == NULL) library = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) library = dlopen("libz.so", RTLD_NOW | RTLD_LOCAL);
#ifdef __APPLE__
    if (library == NULL) library = dlopen("libz.1.dylib", RTLD_NOW | RTLD_LOCAL);
#endif
    return library == NULL ? NULL : dlsym(library, name);
}

/// Whether zlib could be opened (Debian's zlib1g installed).
static inline int wxdb_zlib_available(void) { return wxdb_zlib_symbol("inflate") != NULL; }

static inline int wxdb_inflate_init_gzip(z_streamp stream) {
    int (*f)(z_streamp, int, const char *, int) =
        (int (*)(z_streamp, int, const char *, int))wxdb_zlib_symbol("inflateInit2_");
    return f ? f(stream, 15 + 16, ZLIB_VERSION, (int)sizeof(z_stream)) : Z_VERSION_ERROR;
}
static inline int wxdb_inflate(z_streamp stream, int flush) {
    int (*f)(z_streamp, int) = (int (*)(z_streamp, int))wxdb_zlib_symbol("inflate");
    return f ? f(stream, flush) : Z_STREAM_ERROR;
}
static inline int wxdb_inflate_reset(z_streamp stream) {
    int (*f)(z_streamp) = (int (*)(z_streamp))wxdb_zlib_symbol("inflateReset");
    return f ? f(stream) : Z_STREAM_ERROR;
}
static inline int wxdb_inflate_end(z_streamp stream) {
    int (*f)(z_streamp) = (int (*)(z_streamp))wxdb_zlib_symbol("inflateEnd");
    return f ? f(stream) : Z_STREAM_ERROR;
}
/// One-shot zlib-format compression (compress2); Z_VERSION_ERROR when zlib could not be opened.
static inline int wxdb_compress(unsigned char *dest, unsigned long *destLen, const unsigned char *source,
                                unsigned long sourceLen, int level) {
    int (*f)(unsigned char *, unsigned long *, const unsigned char *, unsigned long, int) =
        (int (*)(unsigned char *, unsigned long *, const unsigned char *, unsigned long, int))wxdb_zlib_symbol(
            "compress2");
    return f ? f(dest, destLen, source, sourceLen, level) : Z_VERSION_ERROR;
}
static inline unsigned long wxdb_compress_bound(unsigned long sourceLen) {
    unsigned long (*f)(unsigned long) = (unsigned long (*)(unsigned long))wxdb_zlib_symbol("compressBound");
    return f ? f(sourceLen) : 0;
}
/// One-shot zlib-format decompression (uncompress2): *sourceLen is set to the input bytes used.
static inline int wxdb_uncompress(unsigned char *dest, unsigned long *destLen, const unsigned char *source,
                                  unsigned long *sourceLen) {
    int (*f)(unsigned char *, unsigned long *, const unsigned char *, unsigned long *) =
        (int (*)(unsigned char *, unsigned long *, const unsigned char *, unsigned long *))wxdb_zlib_symbol(
            "uncompress2");
    return f ? f(dest, destLen, source, sourceLen) : Z_VERSION_ERROR;
}
#endif
