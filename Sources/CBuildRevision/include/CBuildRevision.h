#ifndef HTTPDNS_CBUILDREVISION_H
#define HTTPDNS_CBUILDREVISION_H

/// The git revision this binary was built from: what scripts/build-revision.sh wrote into
/// revision.h (beside revision.c, ignored by git) before the build, or "unknown" without it.
/// A C target because SwiftPM cannot hand a build-time string to Swift code without a plugin.
const char *httpdns_build_revision(void);

#endif
