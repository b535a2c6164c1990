#include "CBuildRevision.h"

// revision.h is written by scripts/build-revision.sh (make build/test/run/sanitize, the
// Dockerfile); a tree where it was never run builds as "unknown".
#if __has_include("revision.h")
#include "revision.h"
#endif
#ifndef HTTPDNS_REVISION
#define HTTPDNS_REVISION "unknown"
#endif

const char *httpdns_build_revision(void) { return HTTPDNS_REVISION; }
