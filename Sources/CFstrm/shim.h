#ifndef CHTTPDNS_FSTRM_SHIM_H
#define CHTTPDNS_FSTRM_SHIM_H
/* Frame Streams (libfstrm): the unix-socket writer and its I/O thread, for dnstap. */
#include <stdlib.h>
#include <fstrm.h>
#endif
