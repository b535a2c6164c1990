#ifndef CHTTPDNS_KNOT_SHIM_H
#define CHTTPDNS_KNOT_SHIM_H
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <libknot/consts.h>
#include <libknot/errcode.h>
#include <libknot/error.h>
#include <libknot/descriptor.h>
#include <libknot/dname.h>
#include <libknot/rrset.h>
#include <libknot/packet/pkt.h>
#include <libknot/packet/wire.h>
#include <libknot/rrtype/opt.h>
#include <libknot/rrtype/rdname.h>
#include <libknot/rrtype/soa.h>

/// A packet of at most `capacity` bytes holding a copy of `bytes` (`knot_pkt_new` with its own
/// buffer: a packet made over a caller's buffer would point into memory Swift may move). NULL
/// when `len` exceeds `capacity` or memory is short.
static inline knot_pkt_t *chttpdns_knot_pkt_copying(const uint8_t *bytes, size_t len, size_t capacity) {
    if (len > capacity || capacity > KNOT_WIRE_MAX_PKTSIZE) return NULL;
    knot_pkt_t *pkt = knot_pkt_new(NULL, (uint16_t)capacity, NULL);
    if (pkt == NULL) return NULL;
    if (len > 0) memcpy(pkt->wire, bytes, len);
    pkt->size = len;
    return pkt;
}

/// The number of RRsets `knot_pkt_parse` put in `section`.
static inline uint16_t chttpdns_knot_section_count(const knot_pkt_t *pkt, knot_section_t section) {
    return knot_pkt_section(pkt, section)->count;
}

/// RRset `index` of `section` (index below `chttpdns_knot_section_count`).
static inline const knot_rrset_t *chttpdns_knot_section_rr(const knot_pkt_t *pkt, knot_section_t section, uint16_t index) {
    return knot_pkt_rr(knot_pkt_section(pkt, section), index);
}

/// Record `index` of an RRset's rdata set (index below `rrs.count`).
static inline const knot_rdata_t *chttpdns_knot_rdata_at(const knot_rrset_t *rr, uint16_t index) {
    return knot_rdataset_at(&rr->rrs, index);
}

/// The EDNS Client Subnet option of a parsed packet (its code, length and data), or NULL.
static inline const uint8_t *chttpdns_knot_ecs_option(const knot_pkt_t *pkt) {
    return knot_pkt_edns_option(pkt, KNOT_EDNS_OPTION_CLIENT_SUBNET);
}

#endif
