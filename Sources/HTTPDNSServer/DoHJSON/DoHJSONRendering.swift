import HTTPDNSCore

/// The DoH JSON API's bodies (WIRE-FORMATS §1) over the engine's answers, written through the
/// same generic writer as API v1 and EMAS (`AnswerRendering.writeEachAddress`, `JSONSink`).
enum DoHJSONRendering {
    /// The DNS RCODEs the `Status` field carries.
    enum Status: UInt32 {
        case noError = 0, formatError = 1, serverFailure = 2, nameError = 3, notImplemented = 4, refused = 5
    }

    /// One question's answer, HTTP 200: `{"Status":0,"TC":false,"RD":true,"RA":true,"AD":false,
    /// "CD":false,"Question":[{"name":"N.","type":T}],"Answer":[{"name":"N.","type":T,"TTL":t,
    /// "data":"ADDRESS"},...]}`. A name that does not exist is `Status` 3 without `Answer`, a
    /// name without records of the type `Status` 0 without `Answer`, and one that no upstream
    /// could answer `Status` 2 with a `Comment`. `short`: the bare array of addresses (`[]` for
    /// no records), except for a failure, which keeps the object form (an array cannot say it).
    static func answer(_ result: HostResult, family: RecordFamily, short: Bool) -> HTTPResponse {
        var writer = JSONWriter()
        guard let answer = result.answers.first?.1 else {
            let failure = result.failure
            writeHeader(.serverFailure, host: result.host, family: family, to: &writer)
            writer.raw(#","Comment":"#)
            writer.string("could not resolve \(result.host.value): \(failure?.message ?? "no answer")")
            writer.raw("}")
            return .json(200, writer)
        }
        if short {
            AnswerRendering.writeAddresses(answer.addressList, to: &writer)
            return .json(200, writer)
        }
        writeHeader(answer.nxdomain ? .nameError : .noError, host: result.host, family: family, to: &writer)
        if !answer.nxdomain && !answer.addressList.isEmpty {
            var name = result.host.value
            name.withUTF8 { name in
                writer.raw(#","Answer":["#)
                var first = true
                AnswerRendering.writeEachAddress(answer.addressList, to: &writer) { sink in
                    sink.put(first ? #"{"name":""# : #"},{"name":""#)
                    first = false
                    sink.put(name)
                    sink.put(#".","type":"#)
                    sink.decimal(UInt32(family.rawValue))
                    sink.put(#","TTL":"#)
                    sink.decimal(answer.ttl)
                    sink.put(#","data":"#)
                }
                writer.raw("}]")
            }
        }
        writer.raw("}")
        return .json(200, writer)
    }

    /// `{"Status":S,"TC":false,"RD":true,"RA":true,"AD":false,"CD":false,"Question":[..]` (no
    /// closing brace). `host` is a valid name, which JSON never needs to escape.
    private static func writeHeader(_ status: Status, host: HostName, family: RecordFamily, to writer: inout JSONWriter) {
        writer.raw(#"{"Status":"#)
        writer.decimal(status.rawValue)
        writer.raw(#","TC":false,"RD":true,"RA":true,"AD":false,"CD":false,"Question":[{"name":""#)
        writer.raw(host.value)
        writer.raw(#".","type":"#)
        writer.decimal(UInt32(family.rawValue))
        writer.raw("}]")
    }

    /// An error of the request (not of the name): `{"Status":S,"Code":"C","Comment":"M"}` with the
    /// error's HTTP status and headers (`Allow`, `Retry-After`). `Status` is the DNS RCODE a
    /// resolver would give: 5 REFUSED for an unknown account, a refused signature or a rate
    /// limit; 4 NOTIMP for an unsupported type; 2 SERVFAIL for a server-side failure; 1 FORMERR
    /// for other bad requests. A refused signature is HTTP 403, as Alibaba's service answers it.
    static func error(_ error: APIError) -> HTTPResponse {
        var code = error.code
        if code == .unauthorized { code = .invalidSignature }
        let status: Status
        switch code.status {
        case 401, 403, 404, 429: status = .refused
        case 500...: status = .serverFailure
        default: status = code == .unsupportedType ? .notImplemented : .formatError
        }
        var writer = JSONWriter()
        writer.raw(#"{"Status":"#)
        writer.decimal(status.rawValue)
        writer.raw(#","Code":"#)
        writer.string(code.rawValue)
        writer.raw(#","Comment":"#)
        writer.string(error.message)
        writer.raw("}")
        return HTTPResponse(status: code.status, headers: error.headers.filter { $0.0 != "WWW-Authenticate" }, body: writer.bytes)
    }
}
