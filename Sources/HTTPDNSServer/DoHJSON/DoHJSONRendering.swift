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
    /// name without records of the type `Status` 0 without `Answer`, both with `"Authority":[{
    /// "name":"ZONE.","type":6,"TTL":t,"data":"MNAME RNAME SERIAL REFRESH RETRY EXPIRE MINIMUM"}]`
    /// when the upstream gave the zone's SOA (`TTL` the answer's remaining one), and one that no
    /// upstream could answer `Status` 2 with a `Comment`; one the account's `domains` refuses
    /// `Status` 5 (REFUSED) with a `Comment`. Addresses DNS64 synthesized (the account's
    /// `dns64Prefix`) add `"DNS64":true` after `Answer`. `short`: the bare array of addresses (`[]` for
    /// no records), except for a failure, which keeps the object form (an array cannot say it).
    static func answer(_ result: HostResult, family: RecordFamily, short: Bool) -> HTTPResponse {
        var writer = JSONWriter()
        guard let answer = result.answers.first?.1 else {
            let failure = result.failure
            let status: Status = failure?.notAllowed == true ? .refused : .serverFailure
            var name = result.host.value
            name.withUTF8 { writeHeader(status, host: $0, family: family, to: &writer) }
            writer.raw(#","Comment":"#)
            writer.string(
                status == .refused ? failure!.message : "could not resolve \(result.host.value): \(failure?.message ?? "no answer")")
            writer.raw("}")
            return .json(200, writer)
        }
        var name = result.host.value
        name.withUTF8 { name in writeAnswer(host: name, family: family, answer: answer, short: short, to: &writer) }
        return .json(200, writer)
    }

    /// The same body for the fast path: a cached answer, written in one pass into memory that
    /// libmicrohttpd takes over. `host` is a valid name in canonical form.
    static func fastAnswer(host: UnsafeBufferPointer<UInt8>, family: RecordFamily, answer: ResolvedAnswer, short: Bool) -> FastResponse {
        // The header and question are under 128 bytes besides the name; each record under 64
        // besides the name and its address.
        let bound =
            128 + host.count + answer.addressList.count * (64 + host.count) + AnswerRendering.maximumAddresses(answer.addressList)
            + (answer.soa.map { 64 + ByteCursor.maximumString($0.zone.utf8.count) + ByteCursor.maximumString($0.data.utf8.count) } ?? 0)
            + (answer.synthesized ? 16 : 0)
        return FastResponse(bound: bound, source: answer.source) { buffer in
            var cursor = ByteCursor(buffer)
            writeAnswer(host: host, family: family, answer: answer, short: short, to: &cursor)
            return cursor.count
        }
    }

    /// The answer object (or `short`'s bare array) of one answered question: the one writer of
    /// this API's answers.
    private static func writeAnswer<Sink: JSONSink>(
        host name: UnsafeBufferPointer<UInt8>, family: RecordFamily, answer: ResolvedAnswer, short: Bool, to sink: inout Sink
    ) {
        if short {
            AnswerRendering.writeAddresses(answer.addressList, to: &sink)
            return
        }
        writeHeader(answer.nxdomain ? .nameError : .noError, host: name, family: family, to: &sink)
        if !answer.nxdomain && !answer.addressList.isEmpty {
            sink.put(#","Answer":["#)
            var first = true
            AnswerRendering.writeEachAddress(answer.addressList, to: &sink) { sink in
                sink.put(first ? #"{"name":""# : #"},{"name":""#)
                first = false
                sink.put(name)
                sink.put(#".","type":"#)
                sink.decimal(UInt32(family.rawValue))
                sink.put(#","TTL":"#)
                sink.decimal(answer.ttl)
                sink.put(#","data":"#)
            }
            sink.put("}]")
        }
        if answer.synthesized { sink.put(#","DNS64":true"#) }
        if answer.addressList.isEmpty, let soa = answer.soa {
            sink.put(#","Authority":[{"name":"#)
            sink.string(soa.zone)
            sink.put(#","type":6,"TTL":"#)
            sink.decimal(answer.ttl)
            sink.put(#","data":"#)
            sink.string(soa.data)
            sink.put("}]")
        }
        sink.put("}")
    }

    /// `{"Status":S,"TC":false,"RD":true,"RA":true,"AD":false,"CD":false,"Question":[..]` (no
    /// closing brace). `host` is a valid name, which JSON never needs to escape.
    private static func writeHeader<Sink: JSONSink>(
        _ status: Status, host: UnsafeBufferPointer<UInt8>, family: RecordFamily, to sink: inout Sink
    ) {
        sink.put(#"{"Status":"#)
        sink.decimal(status.rawValue)
        sink.put(#","TC":false,"RD":true,"RA":true,"AD":false,"CD":false,"Question":[{"name":""#)
        sink.put(host)
        sink.put(#".","type":"#)
        sink.decimal(UInt32(family.rawValue))
        sink.put("}]")
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
