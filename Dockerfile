# syntax=docker/dockerfile:1
# httpdnsd container image: a release build with the Swift runtime linked statically, on
# debian:bookworm-slim with only the C libraries the binary links against.
#
#   docker build -t httpdnsd:1.0.0 --build-arg HTTPDNS_REVISION=$(git rev-parse --short=12 HEAD) .
#   docker run --rm -p 8080:8080 -v httpdnsd-data:/var/lib/httpdnsd httpdnsd:1.0.0
#
# Images are tagged with the release (`httpdnsd --version`), never `latest`. The whole image is
# checked end to end by scripts/container-check.sh (docs/deployment.md).

# ---- build stage ---------------------------------------------------------------------------
FROM swift:6.3-bookworm AS builder

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd-dev libgnutls28-dev libcurl4-openssl-dev libc-ares-dev libmaxminddb-dev libsqlite3-dev libssl-dev libknot-dev libhiredis-dev libfstrm-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src
# The manifest first: its layer (and the dependency resolution) is reused while only sources change.
COPY Package.swift ./
RUN swift package resolve
# Sources, then the test directories (the manifest declares test targets; SwiftPM wants their paths to exist).
COPY Sources ./Sources
COPY Tests ./Tests
# The git revision the binary reports (--version, httpdns_build_info): the context has no .git, so
# it comes from the build argument, e.g. --build-arg HTTPDNS_REVISION=$(git rev-parse --short=12 HEAD).
ARG HTTPDNS_REVISION=unknown
COPY scripts/build-revision.sh ./scripts/
RUN ./scripts/build-revision.sh "$HTTPDNS_REVISION"
RUN swift build -c release --static-swift-stdlib --product httpdnsd \
 && install -D -m 0755 "$(swift build -c release --show-bin-path)/httpdnsd" /out/httpdnsd \
 && strip /out/httpdnsd

# ---- runtime stage -------------------------------------------------------------------------
FROM debian:bookworm-slim

# Exactly the shared libraries `ldd /usr/local/bin/httpdnsd` lists beyond libc/libstdc++/libgcc
# (which the base image has), plus the CA bundle for https:// upstreams.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd12 libgnutls30 libcurl4 libc-ares2 libmaxminddb0 libsqlite3-0 libssl3 libknot13 libhiredis0.14 libfstrm0 ca-certificates \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /var/log/apt /var/log/dpkg.log

RUN groupadd --gid 10001 httpdnsd \
 && useradd --no-log-init --uid 10001 --gid httpdnsd --home-dir /var/lib/httpdnsd --no-create-home \
      --shell /usr/sbin/nologin httpdnsd \
 && install -d -o httpdnsd -g httpdnsd -m 0750 /var/lib/httpdnsd \
 && install -d -m 0755 /etc/httpdnsd

COPY --from=builder /out/httpdnsd /usr/local/bin/httpdnsd
COPY deploy/healthcheck.sh /usr/local/bin/httpdnsd-healthcheck

# The database lives on the volume so the cache survives container restarts (warm restart).
# Listen on every interface of the container; publish the port to choose who reaches it.
# HTTPS: mount a certificate and key and set HTTPDNS_TLS_CERT / HTTPDNS_TLS_KEY (and, for the
# health check, HTTPDNS_OPS_LISTEN or HTTPDNS_LISTEN_PLAIN: it speaks plain HTTP).
ENV HTTPDNS_DB=/var/lib/httpdnsd/httpdnsd.sqlite \
    HTTPDNS_LISTEN=0.0.0.0:8080

USER httpdnsd
WORKDIR /var/lib/httpdnsd
VOLUME /var/lib/httpdnsd
EXPOSE 8080
# SIGTERM: stop accepting, finish the requests in flight, flush SQLite, exit 0.
STOPSIGNAL SIGTERM
# GET /healthz over bash's /dev/tcp (no curl in the image). Docker honours this; podman only
# with `podman build --format docker` (the OCI format drops it) or `podman run --health-cmd httpdnsd-healthcheck`.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/usr/local/bin/httpdnsd-healthcheck"]

ENTRYPOINT ["httpdnsd"]
