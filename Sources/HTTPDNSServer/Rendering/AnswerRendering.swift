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

    /// The response for one host and one family answered: what `response` gives for that case,
    /// written without intermediate arrays (the cache-hit path).
    static func single(host: HostName, family: RecordFamily, answer: ResolvedAnswer, short: Bool) -> HTTPResponse {
        var writer = JSONWriter(capacity: 160)
        if short {
            writer.addressArray(answer.addressList)
            return .json(200, writer)
        }
        writer.raw("{")
        writer.key("host")
        writer.string(host.value)
        writer.comma()
        writer.key("ips")
        if family == .a { writer.addressArray(answer.addressList) } else { writer.raw("[]") }
        writer.comma()
        writer.key("ipsv6")
        if family == .aaaa { writer.addressArray(answer.addressList) } else { writer.raw("[]") }
        writeLifetime(
            ttl: answer.ttl, originTTL: answer.originTTL, source: answer.source, stale: answer.stale,
            nxdomain: answer.nxdomain, to: &writer)
        return .json(200, writer)
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
