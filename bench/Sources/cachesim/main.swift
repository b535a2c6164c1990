// Cache simulator (issue 16): replays synthetic workloads through the service's own cache, with
// its keys (`CacheKey`) and shard layout: the shipped policy through `AnswerCache` itself, LRU
// and W-TinyLFU through `BoundedCache` shards laid out the same way; prints hit ratios per policy
// and size beside the bound no policy without foresight can pass.
//
//   swift build -c release --package-path bench --scratch-path bench/out/cachesim && bench/out/cachesim/release/cachesim
//   cachesim [--names N] [--markdown]   the table of bench/RESULTS.md
//   cachesim --experiment [--names N]   S3-FIFO variants (S3FIFOVariant.swift) at 1%
//   cachesim --memory [N]               bytes per entry at N entries (Memory.swift; make bench runs it)
//
// Deterministic: the requests come from a seeded generator, and the process re-runs itself with
// SWIFT_DETERMINISTIC_HASHING=1 so that keys hash alike from run to run.

import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

if getenv("SWIFT_DETERMINISTIC_HASHING") == nil {
    setenv("SWIFT_DETERMINISTIC_HASHING", "1", 1)
    let arguments = CommandLine.arguments.map { strdup($0) } + [nil]
    execv("/proc/self/exe", arguments)
    fatalError("could not re-run with SWIFT_DETERMINISTIC_HASHING=1: errno \(errno)")
}

if let at = CommandLine.arguments.firstIndex(of: "--memory-one") {
    memoryOne(layout: CommandLine.arguments[at + 1], entries: Int(CommandLine.arguments[at + 2])!)
    exit(0)
}
if let at = CommandLine.arguments.firstIndex(of: "--memory") {
    runMemory(entries: at + 1 < CommandLine.arguments.count ? Int(CommandLine.arguments[at + 1])! : 1_000_000)
    exit(0)
}

var names = 1_000_000
var markdown = false
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--names": names = Int(arguments.next() ?? "") ?? names
    case "--markdown": markdown = true
    case "--experiment": break
    default:
        print("usage: cachesim [--names N] [--markdown | --experiment] | --memory [N]")
        exit(2)
    }
}

if CommandLine.arguments.contains("--experiment") {
    runExperiment(names: names)
    exit(0)
}

let sizes = [1, 5, 10].map { (percent: $0, capacity: names * $0 / 100) }
let warmUp = names
let measured = 2 * names

var rows: [Row] = []
for size in sizes {
    let capacity = size.capacity
    var workloads: [Workload] = [0.8, 1.0, 1.2].map { Workload.zipf(exponent: $0, names: names, warmUp: warmUp, measured: measured) }
    for ratio in [1, 10] { workloads.append(.flood(names: names, capacity: capacity, perRequest: ratio, warmUp: warmUp)) }
    workloads.append(
        .scans(names: names, capacity: capacity, scanLength: 2 * capacity, every: 2 * capacity, warmUp: warmUp, measured: measured))
    workloads.append(
        .scans(names: names, capacity: capacity, scanLength: 10 * capacity, every: capacity, warmUp: warmUp, measured: 5 * capacity))
    workloads.append(.preload(names: names, preloaded: names / 10, warmUp: warmUp))
    for workload in workloads {
        let trace = workload.trace
        let exponent: Double
        if case .zipf(let s, _, _, _) = workload { exponent = s } else { exponent = 1.0 }
        let best = bound(names: names, exponent: exponent, capacity: capacity)
        let lru = replay(trace, LRUPolicy.self, capacity: capacity)
        let s3fifo = replayAnswerCache(trace, capacity: capacity)
        let tinyLFU = replay(trace, TinyLFUPolicy.self, capacity: capacity)
        let row = Row(workload: workload.name, percent: size.percent, bound: best, lru: lru, s3fifo: s3fifo, tinyLFU: tinyLFU)
        rows.append(row)
        if !markdown { print(row.text) }
        fflush(nil)
    }
}
if markdown {
    print("| workload | size | bound | LRU | S3-FIFO (AnswerCache) | W-TinyLFU | S3-FIFO − LRU | LRU + 20 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows { print(row.markdown) }
}

/// The hit ratio of one workload and policy.
struct Row {
    var workload: String
    var percent: Int
    var bound: Double
    var lru: Double
    var s3fifo: Double
    var tinyLFU: Double

    private static func shown(_ ratio: Double) -> String {
        let tenths = Int((ratio * 1000).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    var text: String {
        let name = workload.padding(toLength: 26, withPad: " ", startingAt: 0)
        return
            "\(name) \(percent)%\tbound \(Self.shown(bound))\tLRU \(Self.shown(lru))\tS3-FIFO \(Self.shown(s3fifo))\tW-TinyLFU \(Self.shown(tinyLFU))"
    }

    var markdown: String {
        let gain = Int(((s3fifo - lru) * 1000).rounded())
        let sign = gain < 0 ? "−" : "+"
        let ratios = [bound, lru, s3fifo, tinyLFU].map(Self.shown).joined(separator: " | ")
        return "| \(workload) | \(percent)% | \(ratios) | \(sign)\(abs(gain) / 10).\(abs(gain) % 10) | \(Self.shown(lru + 0.2)) |"
    }
}

/// The name a trace's key stands for: what the service would cache for it (the A answer of one
/// host), so that every policy sees the keys, hashes and shards the answer cache sees.
func simKey(_ key: UInt64) -> CacheKey {
    CacheKey(host: HostName("n\(key).sim.test")!, family: .a)
}

/// Replays `trace` through a cache of `capacity` entries laid out as the answer cache lays them
/// out (`AnswerCache.shardCount`, `AnswerCache.share`; a key's shard is its hash modulo the shard
/// count), each shard a `BoundedCache` with `policy`: a lookup that misses stores the key.
/// Returns the hit ratio of the counted requests.
func replay<Policy: EvictionPolicy>(_ trace: Trace, _ policy: Policy.Type, capacity: Int) -> Double {
    let shardCount = AnswerCache.shardCount(limit: capacity)
    var shards = (0..<shardCount).map { index in
        BoundedCache<CacheKey, Bool, Policy>(capacity: AnswerCache.share(of: capacity, shard: index, shards: shardCount))
    }
    var hits = 0
    for (position, key) in trace.keys.enumerated() {
        let key = simKey(key)
        let hash = key.cacheHash
        let shard = Int(UInt(bitPattern: hash) % UInt(shardCount))
        if shards[shard].withValue(for: key, hash: hash, touch: true, { _ in }) != nil {
            if trace.counted(position) { hits += 1 }
        } else {
            shards[shard].set(true, for: key, hash: hash)
        }
    }
    return Double(hits) / Double(trace.countedTotal)
}

/// Replays `trace` through the service's `AnswerCache` itself (its shards, locks and policy), as
/// a request does: `hit`, and on a miss `set` of an answer that does not expire during the run.
func replayAnswerCache(_ trace: Trace, capacity: Int) -> Double {
    let cache = AnswerCache(limit: capacity)
    let entry = CacheEntry(addresses: ["192.0.2.1"], originTTL: 86400, storedAt: 0)
    var hits = 0
    for (position, key) in trace.keys.enumerated() {
        let key = simKey(key)
        if cache.hit(key, at: 1, refreshAhead: false) != nil {
            if trace.counted(position) { hits += 1 }
        } else {
            cache.set(entry, for: key)
        }
    }
    return Double(hits) / Double(trace.countedTotal)
}

/// Requests, and which of them count towards the hit ratio.
struct Trace {
    var keys: [UInt64] = []
    /// Per request, whether it is counted (the warm-up and the attack's own requests are not).
    var countedFlags: [Bool] = []
    var countedTotal = 0

    mutating func append(_ key: UInt64, counted: Bool) {
        keys.append(key)
        countedFlags.append(counted)
        if counted { countedTotal += 1 }
    }

    func counted(_ position: Int) -> Bool { countedFlags[position] }
}

/// The workloads of issue 16. Zipf ranks are keys 0..<names; the other requests use keys outside
/// that range, each workload its own. Only Zipf requests after the warm-up are counted.
enum Workload {
    /// `warmUp` uncounted then `measured` counted Zipf requests.
    case zipf(exponent: Double, names: Int, warmUp: Int, measured: Int)
    /// A flood of 10 × capacity never-repeated random names, `perRequest` of them before each
    /// counted Zipf(1.0) request: 1 (the attack sends as much as the clients) or 10 (about the
    /// issue's attack, 3 000 random names a second against a hot set read at 200 a second).
    case flood(names: Int, capacity: Int, perRequest: Int, warmUp: Int)
    /// Zipf(1.0) with, after every `every` Zipf requests, a sequential scan of the same
    /// `scanLength` names outside the Zipf names (a periodic job walking a long tail).
    case scans(names: Int, capacity: Int, scanLength: Int, every: Int, warmUp: Int, measured: Int)
    /// A preload of `preloaded` names nobody asks for again (stored as a preload stores them,
    /// through a miss), one before each counted Zipf(1.0) request.
    case preload(names: Int, preloaded: Int, warmUp: Int)

    var name: String {
        switch self {
        case .zipf(let exponent, _, _, _): "Zipf \(exponent)"
        case .flood(_, _, let perRequest, _): "flood \(perRequest):1"
        case .scans(_, let capacity, let length, let every, _, _): "scans \(length / capacity)×C every \(every / capacity)×C"
        case .preload(_, let preloaded, _): "preload \(preloaded / 1000)k 1:1"
        }
    }

    var trace: Trace {
        var generator = SplitMix64(seed: 16)
        var trace = Trace()
        switch self {
        case .zipf(let exponent, let names, let warmUp, let measured):
            let zipf = Zipf(names: names, exponent: exponent)
            for _ in 0..<warmUp { trace.append(zipf.next(&generator), counted: false) }
            for _ in 0..<measured { trace.append(zipf.next(&generator), counted: true) }
        case .flood(let names, let capacity, let perRequest, let warmUp):
            let zipf = Zipf(names: names, exponent: 1.0)
            for _ in 0..<warmUp { trace.append(zipf.next(&generator), counted: false) }
            for _ in 0..<(10 * capacity / perRequest) {
                // Random 62-bit names above the Zipf range: never repeated in practice.
                for _ in 0..<perRequest { trace.append((generator.next() | 1 << 62) & ~(1 << 63), counted: false) }
                trace.append(zipf.next(&generator), counted: true)
            }
        case .scans(let names, _, let length, let every, let warmUp, let measured):
            let zipf = Zipf(names: names, exponent: 1.0)
            for _ in 0..<warmUp { trace.append(zipf.next(&generator), counted: false) }
            var done = 0
            while done < measured {
                for _ in 0..<min(every, measured - done) { trace.append(zipf.next(&generator), counted: true) }
                done += every
                for index in 0..<length { trace.append(UInt64(1 << 40 + index), counted: false) }
            }
        case .preload(let names, let preloaded, let warmUp):
            let zipf = Zipf(names: names, exponent: 1.0)
            for _ in 0..<warmUp { trace.append(zipf.next(&generator), counted: false) }
            for index in 0..<preloaded {
                trace.append(UInt64(1 << 41 + index), counted: false)
                trace.append(zipf.next(&generator), counted: true)
            }
        }
        return trace
    }
}

/// Zipf ranks 0..<names (rank 0 the most asked), P(rank k) ∝ 1 / (k + 1)^exponent, by binary
/// search in the cumulative distribution.
struct Zipf {
    private var cumulative: [Double]

    init(names: Int, exponent: Double) {
        cumulative = []
        cumulative.reserveCapacity(names)
        var total = 0.0
        for rank in 1...names {
            total += 1 / pow(Double(rank), exponent)
            cumulative.append(total)
        }
        for index in cumulative.indices { cumulative[index] /= total }
    }

    func next(_ generator: inout SplitMix64) -> UInt64 {
        let target = Double(generator.next() >> 11) / Double(1 << 53)
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] < target { low = middle + 1 } else { high = middle }
        }
        return UInt64(low)
    }
}

/// SplitMix64 (Steele, Lea, Flood): a small seeded generator.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The best hit ratio any policy that does not see the future can reach on the counted Zipf
/// requests: each is drawn independently of everything before it, so its chance of a hit is the
/// probability mass of the Zipf names the cache holds at that moment, at most that of the most
/// probable names each shard has room for.
func bound(names: Int, exponent: Double, capacity: Int) -> Double {
    let shardCount = AnswerCache.shardCount(limit: capacity)
    var room = (0..<shardCount).map { AnswerCache.share(of: capacity, shard: $0, shards: shardCount) }
    var total = 0.0
    var held = 0.0
    for rank in 0..<names {
        let p = 1 / pow(Double(rank + 1), exponent)
        total += p
        let shard = Int(UInt(bitPattern: simKey(UInt64(rank)).cacheHash) % UInt(shardCount))
        if room[shard] > 0 {
            room[shard] -= 1
            held += p
        }
    }
    return held / total
}

func runExperiment(names: Int) {
    let capacity = names / 100
    var workloads: [Workload] = [0.8, 1.0, 1.2].map { Workload.zipf(exponent: $0, names: names, warmUp: names, measured: 2 * names) }
    for ratio in [1, 10] { workloads.append(.flood(names: names, capacity: capacity, perRequest: ratio, warmUp: names)) }
    workloads.append(
        .scans(names: names, capacity: capacity, scanLength: 2 * capacity, every: 2 * capacity, warmUp: names, measured: 2 * names))
    workloads.append(
        .scans(names: names, capacity: capacity, scanLength: 10 * capacity, every: capacity, warmUp: names, measured: 5 * capacity))
    workloads.append(.preload(names: names, preloaded: names / 10, warmUp: names))
    let variants: [(String, VariantConfig)] = [
        ("10% g100", VariantConfig()),
        ("10% g50", VariantConfig(ghostPercent: 50)),
        ("10% g25", VariantConfig(ghostPercent: 25)),
        ("5% g100", VariantConfig(smallPercent: 5)),
        ("5% g50", VariantConfig(smallPercent: 5, ghostPercent: 50)),
        ("5% g25", VariantConfig(smallPercent: 5, ghostPercent: 25)),
        ("10% g50 tlfu", VariantConfig(ghostPercent: 50, guardGhost: true)),
    ]
    print("workload\tbound\tLRU\t" + (getenv("SIM_TINYLFU") != nil ? "W-TinyLFU\t" : "") + variants.map(\.0).joined(separator: "\t"))
    for workload in workloads {
        let trace = workload.trace
        var line = workload.name
        let exponent: Double
        if case .zipf(let s, _, _, _) = workload { exponent = s } else { exponent = 1.0 }
        line += "\t" + String(format1(bound(names: names, exponent: exponent, capacity: capacity)))
        line += "\t" + format1(replay(trace, LRUPolicy.self, capacity: capacity))
        if getenv("SIM_TINYLFU") != nil { line += "\t" + format1(replay(trace, TinyLFUPolicy.self, capacity: capacity)) }
        for (_, config) in variants {
            variantConfig = config
            line += "\t" + format1(replay(trace, S3FIFOVariant.self, capacity: capacity))
        }
        print(line)
        fflush(nil)
    }
}

func format1(_ ratio: Double) -> String {
    let tenths = Int((ratio * 1000).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}
