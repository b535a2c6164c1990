import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

// `cachesim --memory [N]`: bytes per cached entry at N entries (default 1 000 000), in process.
// Each layout runs in a process of its own (`--memory-one LAYOUT N`), since freed memory does not
// reliably leave a process's RSS:
//
// - `answercache`: the service's `AnswerCache` (S3-FIFO, 16 shards) with the entries `make bench`
//   section (6) preloads (`s0000000.bench.test`, two IPv4 addresses, TTL 86400);
// - `lru` and `s3fifo`: the same keys and entries in 16 `BoundedCache` shards with `LRUPolicy`
//   (the cache before issue 16) and `S3FIFOPolicy`, without the answer cache's per-entry flags:
//   their difference is what the policy costs.
//
// RSS is read after N entries (no eviction yet), then after N / 10 more names (the cache evicts:
// the policy's eviction-time structures exist). Bytes per entry = RSS growth / N.

func rssKiB() -> Int {
    guard let file = fopen("/proc/self/status", "r") else { fatalError("cannot open /proc/self/status: errno \(errno)") }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("VmRSS:") {
            let digits = text.dropFirst(6).filter { $0.isNumber }
            return Int(String(digits))!
        }
    }
    fatalError("no VmRSS in /proc/self/status")
}

func benchKey(_ index: Int) -> CacheKey {
    var digits = String(index)
    digits = String(repeating: "0", count: max(0, 7 - digits.count)) + digits
    return CacheKey(host: HostName("s\(digits).bench.test")!, family: .a)
}

let benchEntry = CacheEntry(addresses: ["127.0.0.12", "127.0.0.11"], originTTL: 86400, storedAt: 1_000_000)

/// A cache of `limit` entries in 16 shards as `AnswerCache` spreads them, for the policy layouts.
struct ShardedCache<Policy: EvictionPolicy> {
    var shards: [BoundedCache<CacheKey, CacheEntry, Policy>]

    init(limit: Int) {
        shards = (0..<16).map { BoundedCache(capacity: limit / 16 + ($0 < limit % 16 ? 1 : 0)) }
    }

    mutating func set(_ key: CacheKey) {
        let hash = key.cacheHash
        shards[Int(UInt(bitPattern: hash) % 16)].set(benchEntry, for: key, hash: hash)
    }
}

func memoryOne(layout: String, entries: Int) {
    let before = rssKiB()
    var readings: [Int] = []
    func fill<C>(_ cache: inout C, _ set: (inout C, CacheKey) -> Void) {
        for index in 0..<entries { set(&cache, benchKey(index)) }
        readings.append(rssKiB())
        for index in entries..<(entries + entries / 10) { set(&cache, benchKey(index)) }
        readings.append(rssKiB())
    }
    switch layout {
    case "answercache":
        var cache = AnswerCache(limit: entries)
        fill(&cache) { $0.set(benchEntry, for: $1) }
        precondition(cache.count == entries)
        withExtendedLifetime(cache) {}
    case "lru":
        var cache = ShardedCache<LRUPolicy>(limit: entries)
        fill(&cache) { $0.set($1) }
        withExtendedLifetime(cache) {}
    case "s3fifo":
        var cache = ShardedCache<S3FIFOPolicy>(limit: entries)
        fill(&cache) { $0.set($1) }
        withExtendedLifetime(cache) {}
    default:
        fatalError("unknown layout \(layout)")
    }
    let perEntry = readings.map { Double($0 - before) * 1024 / Double(entries) }
    print("| \(layout) | \(entries) | \(before / 1024) MiB | \(Int(perEntry[0].rounded())) | \(Int(perEntry[1].rounded())) |")
}

func runMemory(entries: Int) {
    print("| layout | entries | RSS before | bytes per entry, full | bytes per entry, evicting |")
    print("|---|---:|---:|---:|---:|")
    fflush(nil)
    var path = [CChar](repeating: 0, count: 4096)
    let length = readlink("/proc/self/exe", &path, path.count - 1)
    guard length > 0 else { fatalError("readlink /proc/self/exe: errno \(errno)") }
    let executable = String(decoding: path[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    for layout in ["lru", "s3fifo", "answercache"] {
        let status = system("'\(executable)' --memory-one \(layout) \(entries)")
        if status != 0 { fatalError("--memory-one \(layout) exited with status \(status)") }
    }
}
