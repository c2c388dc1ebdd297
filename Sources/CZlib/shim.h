#ifndef WXDB_CZLIB_SHIM_H
#define WXDB_CZLIB_SHIM_H
#include <zlib.h>

// inflateInit2 is a macro Swift cannot import; the gzip wrapper needs windowBits 15 + 16.
static inline int wxdb_inflate_init_gzip(z_streamp stream) {
    return inflateInit2_(stream, 15 + 16, ZLIB_VERSION, (int)sizeof(z_stream));
}
#endif
