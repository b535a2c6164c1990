#ifndef CHTTPDNS_MALLOC_SHIM_H
#define CHTTPDNS_MALLOC_SHIM_H
/* glibc's allocator controls (malloc_trim, mallopt), which Glibc's Swift module does not have. */
#include <malloc.h>
#endif
