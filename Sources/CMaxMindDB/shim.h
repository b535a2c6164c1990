#ifndef CHTTPDNS_MAXMINDDB_SHIM_H
#define CHTTPDNS_MAXMINDDB_SHIM_H
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <string.h>
#include <stdio.h>
#include <maxminddb.h>

/// MMDB_lookup_sockaddr for an address given as its 4 or 16 bytes; returns the MMDB error code
/// (MMDB_SUCCESS when the lookup ran, found or not) and whether an entry was found in *found.
static inline int chttpdns_mmdb_lookup(const MMDB_s *db, const unsigned char *bytes, int count, MMDB_entry_s *entry, int *found) {
    struct sockaddr_storage storage;
    memset(&storage, 0, sizeof storage);
    if (count == 4) {
        struct sockaddr_in *in = (struct sockaddr_in *)&storage;
        in->sin_family = AF_INET;
        memcpy(&in->sin_addr, bytes, 4);
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&storage;
        in6->sin6_family = AF_INET6;
        memcpy(&in6->sin6_addr, bytes, 16);
    }
    int error = MMDB_SUCCESS;
    MMDB_lookup_result_s result = MMDB_lookup_sockaddr(db, (const struct sockaddr *)&storage, &error);
    *found = result.found_entry ? 1 : 0;
    if (result.found_entry) *entry = result.entry;
    return error;
}

/// The UTF-8 string at `path` (a NULL-terminated list of keys) copied into `out` (NUL-ended,
/// cut at `capacity - 1` bytes); its length, or -1 when absent or not a string.
static inline int chttpdns_mmdb_string(MMDB_entry_s *entry, const char *const *path, char *out, size_t capacity) {
    MMDB_entry_data_s data;
    if (MMDB_aget_value(entry, &data, path) != MMDB_SUCCESS || !data.has_data || data.type != MMDB_DATA_TYPE_UTF8_STRING) return -1;
    size_t count = data.data_size < capacity - 1 ? data.data_size : capacity - 1;
    memcpy(out, data.utf8_string, count);
    out[count] = 0;
    return (int)count;
}

/// The ISO code of `entry`'s country (`country.iso_code`) into `out`; see chttpdns_mmdb_string.
static inline int chttpdns_mmdb_country(MMDB_entry_s *entry, char *out, size_t capacity) {
    const char *path[] = {"country", "iso_code", NULL};
    return chttpdns_mmdb_string(entry, path, out, capacity);
}

/// The ISO code of `entry`'s subdivision `index` (`subdivisions.N.iso_code`) into `out`.
static inline int chttpdns_mmdb_subdivision(MMDB_entry_s *entry, int index, char *out, size_t capacity) {
    char number[16];
    snprintf(number, sizeof number, "%d", index);
    const char *path[] = {"subdivisions", number, "iso_code", NULL};
    return chttpdns_mmdb_string(entry, path, out, capacity);
}

/// `autonomous_system_number` of `entry` into *out; 0 when found, -1 when absent.
static inline int chttpdns_mmdb_asn(MMDB_entry_s *entry, uint32_t *out) {
    const char *path[] = {"autonomous_system_number", NULL};
    MMDB_entry_data_s data;
    if (MMDB_aget_value(entry, &data, path) != MMDB_SUCCESS || !data.has_data || data.type != MMDB_DATA_TYPE_UINT32) return -1;
    *out = data.uint32;
    return 0;
}

#endif
