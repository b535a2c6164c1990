import HTTPDNSCore

/// The answers of one host, per family asked.
struct HostResult: Sendable {
    var host: HostName
    var families: [(RecordFamily, FamilyOutcome)]

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

    var allAddresses: [String] {
        let answers = answers
        return answers.filter { $0.0 == .a }.flatMap(\.1.addresses) + answers.filter { $0.0 == .aaaa }.flatMap(\.1.addresses)
    }
}

extension APIError {
    init(_ failure: ResolveFailure, host: HostName) {
        self.init(
            failure.timedOut ? .upstreamTimeout : .upstreamFailed,
            "could not resolve \(host.value): \(failure.message)")
    }
}

enum AnswerRendering {
    /// `{"host":..,"ips":[..],"ipsv6":[..],"ttl":..,"origin_ttl":..,"source":..,"stale":..}` with
    /// `"nxdomain":true` for a name that does not exist. With several families, `ttl` and
    /// `origin_ttl` are the smallest, `source` the least cached (stale > localdns > upstream > cache).
    static func writeAnswer(_ result: HostResult, to writer: inout JSONWriter) {
        let answers = result.answers
        writer.raw("{")
        writer.key("host")
        writer.string(result.host.value)
        writeAddresses(answers, to: &writer)
        writeLifetime(
            ttl: answers.map(\.1.ttl).min() ?? 0, originTTL: answers.map(\.1.originTTL).min() ?? 0,
            source: combinedSource(answers.map(\.1.source)), stale: answers.contains { $0.1.stale },
            nxdomain: answers.contains { $0.1.nxdomain }, to: &writer)
    }

    /// `,"ttl":..,"origin_ttl":..,"source":..,"stale":..[,"nxdomain":true]}`: the end of an answer
    /// object, shared by the general and the single-answer renderings.
    static func writeLifetime(
        ttl: UInt32, originTTL: UInt32, source: AnswerSource, stale: Bool, nxdomain: Bool, to writer: inout JSONWriter
    ) {
        writer.comma()
        writer.key("ttl")
        writer.number(ttl)
        writer.comma()
        writer.key("origin_ttl")
        writer.number(originTTL)
        writer.comma()
        writer.key("source")
        writer.string(source.rawValue)
        writer.comma()
        writer.key("stale")
        writer.bool(stale)
        if nxdomain {
            writer.comma()
            writer.key("nxdomain")
            writer.bool(true)
        }
        writer.raw("}")
    }

    /// `,"ips":[...],"ipsv6":[...]` from the answers of each family.
    static func writeAddresses(_ answers: [(RecordFamily, ResolvedAnswer)], to writer: inout JSONWriter) {
        writer.comma()
        writer.key("ips")
        writer.stringArray(answers.filter { $0.0 == .a }.flatMap(\.1.addresses))
        writer.comma()
        writer.key("ipsv6")
        writer.stringArray(answers.filter { $0.0 == .aaaa }.flatMap(\.1.addresses))
    }

    static func combinedSource(_ sources: [AnswerSource]) -> AnswerSource {
        for candidate in [AnswerSource.stale, .localdns, .upstream] where sources.contains(candidate) { return candidate }
        return .cache
    }

    /// The response for one host and one family answered: what `response` gives for that case
    /// (the cache-hit path), written in one pass into an array sized for the longest it can be.
    /// Addresses that JSON would have to escape (none that an upstream parser accepts) take the
    /// general rendering.
    static func single(host: HostName, family: RecordFamily, answer: ResolvedAnswer, short: Bool) -> HTTPResponse {
        var name = host.value
        let written = name.withUTF8 { name in
            single(host: name, family: family, answer: answer, short: short) { bound, write in
                HTTPResponse(status: 200, body: [UInt8](unsafeUninitializedCapacity: bound) { $1 = write($0) })
            }
        }
        return written ?? response([HostResult(host: host, families: [(family, .success(answer))])], batch: false, short: short)
    }

    /// The same body for the fast path, in memory that libmicrohttpd takes over; nil when an
    /// address needs escaping. `host` is a valid name in canonical form.
    static func fastSingle(host: UnsafeBufferPointer<UInt8>, family: RecordFamily, answer: ResolvedAnswer, short: Bool) -> FastResponse? {
        single(host: host, family: family, answer: answer, short: short) { FastResponse(bound: $0, write: $1) }
    }

    /// What both `single`s share: `make` gets an upper bound of the body's size and the function
    /// that writes it into memory of that size (returning the bytes written). Nil when an address
    /// needs escaping.
    private static func single<Made: ~Copyable>(
        host: UnsafeBufferPointer<UInt8>, family: RecordFamily, answer: ResolvedAnswer, short: Bool,
        _ make: (_ bound: Int, _ write: (UnsafeMutableBufferPointer<UInt8>) -> Int) -> Made
    ) -> Made? {
        let texts = answer.addressList.packedIPv4 == nil ? answer.addressList.strings : []
        guard texts.allSatisfy(JSONWriter.needsNoEscaping) else { return nil }
        // Every fixed part together (the longest source, `"stale":false`, `"nxdomain":true`, both
        // numbers at 10 digits) is under 128 bytes; each address adds its text, quotes and a comma.
        var addresses = 0
        if let packed = answer.addressList.packedIPv4 {
            addresses = packed.count * (ByteCursor.maximumIPv4 + 3)
        } else {
            for text in texts { addresses += text.utf8.count + 3 }
        }
        return make(128 + host.count + addresses) { buffer in
            var cursor = ByteCursor(buffer)
            writeSingle(to: &cursor, host: host, family: family, answer: answer, texts: texts, short: short)
            return cursor.count
        }
    }

    /// `[..]` or `{"host":..,"ips":[..],"ipsv6":[..],"ttl":..,"origin_ttl":..,"source":..,"stale":..}`
    /// for `single`: `texts` holds the addresses when they are not packed.
    private static func writeSingle(
        to sink: inout ByteCursor, host: UnsafeBufferPointer<UInt8>, family: RecordFamily, answer: ResolvedAnswer,
        texts: [String], short: Bool
    ) {
        if short {
            writeAddresses(answer.addressList, texts, to: &sink)
            return
        }
        sink.put(#"{"host":""#)
        sink.put(host)
        sink.put(#"","ips":"#)
        if family == .a { writeAddresses(answer.addressList, texts, to: &sink) } else { sink.put("[]") }
        sink.put(#","ipsv6":"#)
        if family == .aaaa { writeAddresses(answer.addressList, texts, to: &sink) } else { sink.put("[]") }
        sink.put(#","ttl":"#)
        sink.decimal(answer.ttl)
        sink.put(#","origin_ttl":"#)
        sink.decimal(answer.originTTL)
        sink.put(#","source":""#)
        switch answer.source {
        case .cache: sink.put("cache")
        case .upstream: sink.put("upstream")
        case .stale: sink.put("stale")
        case .localdns: sink.put("localdns")
        }
        sink.put(answer.stale ? #"","stale":true"# : #"","stale":false"#)
        if answer.nxdomain { sink.put(#","nxdomain":true"#) }
        sink.put("}")
    }

    private static func writeAddresses(_ list: AddressList, _ texts: [String], to sink: inout ByteCursor) {
        sink.put("[")
        if let packed = list.packedIPv4 {
            for index in 0..<packed.count {
                if index > 0 { sink.put(UInt8(ascii: ",")) }
                sink.put(UInt8(ascii: "\""))
                sink.ipv4(index == 0 ? packed.first : index == 1 ? packed.second : packed.third)
                sink.put(UInt8(ascii: "\""))
            }
        } else {
            for (index, var text) in texts.enumerated() {
                if index > 0 { sink.put(UInt8(ascii: ",")) }
                sink.put(UInt8(ascii: "\""))
                text.withUTF8 { sink.put($0) }
                sink.put(UInt8(ascii: "\""))
            }
        }
        sink.put("]")
    }

    /// The response to a resolve (or cache lookup) of `results`: one object, a batch, or a short array.
    static func response(_ results: [HostResult], batch: Bool, short: Bool) -> HTTPResponse {
        if !batch, let only = results.first, let failure = only.failure {
            return APIError(failure, host: only.host).response
        }
        var writer = JSONWriter()
        if short {
            writer.stringArray(results.flatMap(\.allAddresses))
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
