import HTTPDNSCore

/// The answers of one host, per family asked.
struct HostResult: Sendable {
    var host: HostName
    var families: [(RecordFamily, FamilyOutcome)]
    /// The `extra` text of the rule that answered (`rules`), written by v1 and EMAS.
    var extra: String? = nil

    /// The first failure when no family could be answered.
    var failure: ResolveFailure? {
        var first: ResolveFailure?
        for (_, outcome) in families {
            switch outcome {
            case .success: return nil
            case .failure(let failure): first = first ?? failure
            }
        }
        return first
    }

    var answers: [(RecordFamily, ResolvedAnswer)] {
        families.compactMap { family, outcome in
            if case .success(let answer) = outcome { (family, answer) } else { nil }
        }
    }
}

extension APIError {
    init(_ failure: ResolveFailure, host: HostName) {
        if failure.notAllowed {
            self.init(.domainNotAllowed, failure.message)
            return
        }
        if let retryAfter = failure.retryAfter {
            self = .rateLimited(retryAfter: retryAfter, "could not resolve \(host.value): \(failure.message)")
            return
        }
        self.init(
            failure.timedOut ? .upstreamTimeout : .upstreamFailed,
            "could not resolve \(host.value): \(failure.message)")
    }
}

/// The one writer of the v1 answer (and the parts other formats share with it), generic over
/// where the bytes go (`JSONSink`): the general path writes into a growing `JSONWriter`, the
/// cache hit into memory sized beforehand (`fastSingle`). Each is a way of
/// calling the same functions, not a copy of them.
enum AnswerRendering {
    /// `{"host":..,"ips":[..],"ipsv6":[..],"ttl":..,"origin_ttl":..,"source":..,"stale":..}` with
    /// `"nxdomain":true` for a name that does not exist. With several families, `ttl` and
    /// `origin_ttl` are the smallest, `source` the least cached (stale > localdns > upstream > cache).
    static func writeAnswer(_ result: HostResult, to writer: inout JSONWriter) {
        // One pass over the families: no array per combined field on the general path.
        var ipv4: AddressList?, ipv6: AddressList?
        var ttl: UInt32?, originTTL: UInt32?, sources = SourceRank()
        var stale = false, nxdomain = false, dns64 = false, answered = false, allEmpty = true
        for (family, outcome) in result.families {
            guard case .success(let answer) = outcome else { continue }
            answered = true
            if family == .a, ipv4 == nil { ipv4 = answer.addressList }
            if family == .aaaa, ipv6 == nil { ipv6 = answer.addressList }
            ttl = min(ttl ?? answer.ttl, answer.ttl)
            originTTL = min(originTTL ?? answer.originTTL, answer.originTTL)
            sources.add(answer.source)
            stale = stale || answer.stale
            nxdomain = nxdomain || answer.nxdomain
            dns64 = dns64 || answer.synthesized
            allEmpty = allEmpty && answer.addressList.isEmpty && !answer.nxdomain
        }
        var name = result.host.value
        name.withUTF8 { writeHostAndAddresses(host: $0, ipv4: ipv4, ipv6: ipv6, to: &writer) }
        writeLifetime(
            ttl: ttl ?? 0, originTTL: originTTL ?? 0, source: sources.combined, stale: stale, nxdomain: nxdomain,
            nodata: answered && allEmpty, dns64: dns64, extra: result.extra, to: &writer)
    }

    /// `{"host":"H","ips":[..],"ipsv6":[..]`; a nil list is `[]`. `host` is a valid name, which
    /// JSON never needs to escape.
    static func writeHostAndAddresses<Sink: JSONSink>(
        host: UnsafeBufferPointer<UInt8>, ipv4: AddressList?, ipv6: AddressList?, to sink: inout Sink
    ) {
        sink.put(#"{"host":""#)
        sink.put(host)
        sink.put(#"","ips":"#)
        writeAddresses(ipv4, to: &sink)
        sink.put(#","ipsv6":"#)
        writeAddresses(ipv6, to: &sink)
    }

    /// True when the name exists but has no address of any family asked (NODATA): said in the
    /// answer as `"nodata":true`, so an empty answer is never unexplained.
    static func isNoData(_ answers: [ResolvedAnswer]) -> Bool {
        !answers.isEmpty && answers.allSatisfy { $0.addressList.isEmpty && !$0.nxdomain }
    }

    /// `,"ttl":..,"origin_ttl":..,"source":..,"stale":..[,"nxdomain":true|,"nodata":true][,"dns64":true][,"extra":..]}`:
    /// the end of a v1 answer object. `dns64`: the IPv6 addresses were synthesized (DNS64,
    /// `ResolvedAnswer.synthesized`); `extra`: the text of the rule that answered.
    static func writeLifetime<Sink: JSONSink>(
        ttl: UInt32, originTTL: UInt32, source: AnswerSource, stale: Bool, nxdomain: Bool, nodata: Bool = false,
        dns64: Bool = false, extra: String? = nil, to sink: inout Sink
    ) {
        sink.put(#","ttl":"#)
        sink.decimal(ttl)
        sink.put(#","origin_ttl":"#)
        sink.decimal(originTTL)
        sink.put(#","source":""#)
        switch source {
        case .cache: sink.put("cache")
        case .upstream: sink.put("upstream")
        case .stale: sink.put("stale")
        case .localdns: sink.put("localdns")
        case .shared: sink.put("shared")
        case .rule: sink.put("rule")
        }
        sink.put(stale ? #"","stale":true"# : #"","stale":false"#)
        if nxdomain {
            sink.put(#","nxdomain":true"#)
        } else if nodata {
            sink.put(#","nodata":true"#)
        }
        if dns64 { sink.put(#","dns64":true"#) }
        if let extra {
            sink.put(#","extra":"#)
            sink.string(extra)
        }
        sink.put("}")
    }

    /// `,"ips":[...],"ipsv6":[...]` from the answers of each family (preload's results).
    static func writeAddresses(_ answers: [(RecordFamily, ResolvedAnswer)], to writer: inout JSONWriter) {
        writer.put(#","ips":"#)
        writeAddresses(answers.first { $0.0 == .a }?.1.addressList, to: &writer)
        writer.put(#","ipsv6":"#)
        writeAddresses(answers.first { $0.0 == .aaaa }?.1.addressList, to: &writer)
    }

    /// `["a","b"]`; `[]` for nil.
    static func writeAddresses<Sink: JSONSink>(_ list: AddressList?, to sink: inout Sink) {
        sink.put(UInt8(ascii: "["))
        if let list {
            var first = true
            writeAddressElements(list, first: &first, to: &sink)
        }
        sink.put(UInt8(ascii: "]"))
    }

    /// `"a","b"` without brackets, with a comma before each element unless `first` (which it
    /// clears): several lists can form one array (the short form of several answers).
    static func writeAddressElements<Sink: JSONSink>(_ list: AddressList, first: inout Bool, to sink: inout Sink) {
        writeEachAddress(list, to: &sink) { sink in
            if !first { sink.put(UInt8(ascii: ",")) }
            first = false
        }
    }

    /// Each address of `list` as a JSON string (`"192.0.2.1"`), `before` called ahead of each
    /// one: how every format turns an address list into JSON (a bare list, DoH JSON records).
    @inline(__always)
    static func writeEachAddress<Sink: JSONSink>(_ list: AddressList, to sink: inout Sink, before: (inout Sink) -> Void) {
        if let packed = list.packedIPv4 {
            for index in 0..<packed.count {
                before(&sink)
                sink.put(UInt8(ascii: "\""))
                sink.ipv4(packed[index])
                sink.put(UInt8(ascii: "\""))
            }
        } else {
            for text in list.strings {
                before(&sink)
                sink.string(text)
            }
        }
    }

    /// The most bytes `writeAddresses` writes for `list`.
    static func maximumAddresses(_ list: AddressList) -> Int {
        if let packed = list.packedIPv4 { return 2 + packed.count * (AddressList.maximumDottedQuad + 3) }
        return list.strings.reduce(2) { $0 + ByteCursor.maximumString($1.utf8.count) + 1 }
    }

    /// The least cached of the sources added (stale > localdns > upstream > shared > rule >
    /// cache): what an answer of several families says it came from.
    struct SourceRank {
        private var best = 5

        mutating func add(_ source: AnswerSource) { best = min(best, Self.rank(source)) }

        var combined: AnswerSource {
            switch best {
            case 0: .stale
            case 1: .localdns
            case 2: .upstream
            case 3: .shared
            case 4: .rule
            default: .cache
            }
        }

        private static func rank(_ source: AnswerSource) -> Int {
            switch source {
            case .stale: 0
            case .localdns: 1
            case .upstream: 2
            case .shared: 3
            case .rule: 4
            case .cache: 5
            }
        }
    }

    /// The answer for one host and one family from the cache (the route's hit reader,
    /// `ResolveHandler.hit`): what `response` gives for that case, written in one pass into memory
    /// sized for the longest it can be, which libmicrohttpd takes over. `host` is a valid name in
    /// canonical form.
    static func fastSingle(host: UnsafeBufferPointer<UInt8>, family: RecordFamily, answer: ResolvedAnswer, short: Bool) -> FastResponse {
        FastResponse(bound: singleBound(host: host, answer: answer), source: answer.source) { buffer in
            var cursor = ByteCursor(buffer)
            writeSingle(host: host, family: family, answer: answer, short: short, to: &cursor)
            return cursor.count
        }
    }

    /// An upper bound of what `writeSingle` writes: every fixed part together (the longest source,
    /// `"stale":false`, `"nxdomain":true`, both numbers at 10 digits) is under 128 bytes, and
    /// `"dns64":true` under 16 more.
    private static func singleBound(host: UnsafeBufferPointer<UInt8>, answer: ResolvedAnswer) -> Int {
        128 + host.count + maximumAddresses(answer.addressList) + (answer.synthesized ? 16 : 0)
    }

    /// `[..]` or the answer object of one host and one family.
    private static func writeSingle<Sink: JSONSink>(
        host: UnsafeBufferPointer<UInt8>, family: RecordFamily, answer: ResolvedAnswer, short: Bool, to sink: inout Sink
    ) {
        if short {
            writeAddresses(answer.addressList, to: &sink)
            return
        }
        writeHostAndAddresses(
            host: host, ipv4: family == .a ? answer.addressList : nil, ipv6: family == .aaaa ? answer.addressList : nil,
            to: &sink)
        writeLifetime(
            ttl: answer.ttl, originTTL: answer.originTTL, source: answer.source, stale: answer.stale, nxdomain: answer.nxdomain,
            nodata: answer.addressList.isEmpty && !answer.nxdomain, dns64: answer.synthesized, to: &sink)
    }

    /// The response to a resolve (or cache lookup) of `results`: one object, a batch, or a short array.
    static func response(_ results: [HostResult], batch: Bool, short: Bool) -> HTTPResponse {
        if !batch, let only = results.first, let failure = only.failure {
            return APIError(failure, host: only.host).response
        }
        var writer = JSONWriter()
        if short {
            var first = true
            writer.put(UInt8(ascii: "["))
            for result in results {
                for family in [RecordFamily.a, .aaaa] {
                    for (answerFamily, answer) in result.answers where answerFamily == family {
                        writeAddressElements(answer.addressList, first: &first, to: &writer)
                    }
                }
            }
            writer.put(UInt8(ascii: "]"))
            return .json(200, writer)
        }
        if !batch, let only = results.first {
            writeAnswer(only, to: &writer)
            return .json(200, writer)
        }
        writer.raw("{")
        writer.key("results")
        writer.raw("[")
        for (index, result) in results.enumerated() {
            if index > 0 { writer.comma() }
            if let failure = result.failure {
                writer.raw("{")
                writer.key("host")
                writer.string(result.host.value)
                writer.comma()
                writer.key("error")
                APIError(failure, host: result.host).write(to: &writer)
                writer.raw("}")
            } else {
                writeAnswer(result, to: &writer)
            }
        }
        writer.raw("]}")
        return .json(200, writer)
    }
}
