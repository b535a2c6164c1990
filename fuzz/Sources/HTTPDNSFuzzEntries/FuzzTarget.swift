// The entry points the libFuzzer binary (`make fuzz`) and the corpus regression tests
// (`FuzzCorpusTests`, in `make test`) share: one per parser that reads bytes from outside.
// They reach internal parsers through `@testable import`, which only a debug build allows
// (SwiftPM compiles debug modules with `-enable-testing`); a release build of the package
// compiles this module empty.
#if DEBUG
    import Foundation
    import HTTPDNSConfig
    @testable import HTTPDNSCore
    @testable import HTTPDNSServer
    @testable import HTTPDNSStore
    @testable import HTTPDNSUpstream
    @testable import HTTPDNSWire

    /// One fuzz target: its name is the directory of its corpus (`fuzz/<name>/corpus`).
    public enum FuzzTarget: String, CaseIterable, Sendable {
        case queryArguments = "query-arguments"
        case rawRequestURI = "raw-request-uri"
        case hostName = "host-name"
        case dohJSON = "doh-json"
        case emasJSON = "emas-json"
        case dnsReply = "dns-reply"
        case dnsQuery = "dns-query"
        case configJSON = "config-json"
        case accountJSON = "account-json"
        case storeRow = "store-row"
        case http1Response = "http1-response"

        /// Feeds `bytes` to the parser. A crash, a trap or a failed invariant (`check`) is a finding;
        /// a refusal (a thrown or returned error) is the expected answer to most inputs.
        public func run(_ bytes: UnsafeRawBufferPointer) {
            switch self {
            case .queryArguments: Self.queryArguments(bytes)
            case .rawRequestURI: Self.rawRequestURI(bytes)
            case .hostName: Self.hostName(bytes)
            case .dohJSON:
                for family in [RecordFamily.a, .aaaa] { _ = DoHJSONParser.parse(Array(bytes), family: family) }
            case .emasJSON:
                for family in [RecordFamily.a, .aaaa] { _ = HTTPDNSAPIParser.parse(Array(bytes), family: family) }
            case .dnsReply:
                _ = try? DNSReplySummary.parse(Array(bytes))
                for family in [RecordFamily.a, .aaaa] { Self.upstreamReply(Array(bytes), family: family) }
            case .dnsQuery: _ = try? DNSQueryMessage.parse(Array(bytes))
            case .configJSON:
                if let object = try? parseJSONObject(Data(bytes), key: "config") { _ = try? ServiceConfig(json: object) }
            case .accountJSON:
                if let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] {
                    _ = try? AccountConfig(json: object, path: "", allowingRedacted: true)
                }
            case .storeRow: Self.storeRow(bytes)
            case .http1Response: Self.http1Response(bytes)
            }
        }

        /// An upstream's HTTP/1.1 answer as the upstream loop's client reads it, in two pieces
        /// (split where the first byte says, as reads may split it), then the end of the
        /// connection: what the parser keeps stays within its limits, and it never claims more
        /// bytes than it was given.
        private static func http1Response(_ bytes: UnsafeRawBufferPointer) {
            var parser = HTTP1ResponseParser(maximumHeaderSize: 1024, maximumBodySize: 4096)
            let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
            do throws(HTTP1ResponseParser.Failure) {
                for piece in [bytes[0..<split], bytes[split...]] where !piece.isEmpty && !parser.isComplete {
                    let used = try parser.consume(UnsafeRawBufferPointer(rebasing: piece))
                    check(used <= piece.count, "consumed \(used) of \(piece.count) bytes")
                }
                if !parser.isComplete { try parser.finishAtEOF() }
            } catch {
                return
            }
            check(parser.headerBlock.count <= 1024, "a header block of \(parser.headerBlock.count) bytes")
            check(parser.body.count <= 4096, "a body of \(parser.body.count) bytes")
        }

        /// An upstream's reply as the RFC 8484 client reads it: an answer keeps at most
        /// `maximumAddresses` addresses, each the text of an address of the asked family.
        private static func upstreamReply(_ bytes: [UInt8], family: RecordFamily) {
            guard case .success(let answer) = DNSReplyParser.parse(bytes, family: family) else { return }
            check(answer.addresses.count <= DNSReplyParser.maximumAddresses, "\(answer.addresses.count) addresses")
            for address in answer.addresses {
                check(IPAddress(address)?.family == family, "'\(address)' is not an address of \(family)")
            }
        }

        /// A failed invariant: a crash libFuzzer reports with its input.
        static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
            if !condition { fatalError("fuzz invariant: \(message())") }
        }

        /// The query string as libmicrohttpd hands it over: `&`-separated pairs split at the first
        /// `=`, each name and value as decoded bytes (any byte, NUL included).
        private static func queryArguments(_ bytes: UnsafeRawBufferPointer) {
            var arguments = QueryArguments()
            for pair in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
                let pairBytes = UnsafeRawBufferPointer(rebasing: pair)
                if let equals = pairBytes.firstIndex(of: UInt8(ascii: "=")) {
                    arguments.append(
                        name: UnsafeRawBufferPointer(rebasing: pairBytes[..<equals]),
                        value: UnsafeRawBufferPointer(rebasing: pairBytes[(equals + 1)...]))
                } else {
                    arguments.append(name: pairBytes, value: nil)
                }
            }
            // An argument with invalid UTF-8 is refused, not stored, so whatever `pairs` gives reads
            // back exactly by its name; with valid UTF-8 input that holds for every stored argument.
            let validUTF8 = String(validating: bytes, as: UTF8.self) != nil
            for (name, value) in arguments.pairs {
                check(
                    DecodedArgument.firstControl(in: name.utf8) == nil && DecodedArgument.firstControl(in: value.utf8) == nil,
                    "a stored argument holds a control character")
                if validUTF8 { check(arguments[name] == value, "a stored argument is not found under its name") }
            }
            if arguments.refusal == nil {
                check(!bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }), "a control character was accepted")
                check(validUTF8, "invalid UTF-8 was accepted")
            }
        }

        /// The request-target as libmicrohttpd's URI log callback sees it (a C string: the input up
        /// to its first NUL), then checked against a request line laid out as libmicrohttpd leaves it
        /// (`method NUL target NUL version NUL`).
        private static func rawRequestURI(_ bytes: UnsafeRawBufferPointer) {
            let line = Array("GET".utf8) + [0] + Array(bytes) + [0] + Array("HTTP/1.1".utf8) + [0]
            line.withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { base in
                    let uri = RawRequestURI(base + 4)
                    let versionAt = 4 + bytes.count + 1
                    let whole = uri.isWhole(method: base, url: base + 4, version: base + versionAt)
                    check(whole == (!bytes.contains(0) && !uri.pathHasEncodedNUL), "isWhole disagrees with the bytes")
                }
            }
        }

        private static func hostName(_ bytes: UnsafeRawBufferPointer) {
            guard let host = HostName(utf8: bytes) else {
                check(
                    HostName(String(decoding: bytes, as: UTF8.self)) == nil || !bytes.allSatisfy({ $0 < 0x80 }),
                    "the byte and text initialisers disagree")
                return
            }
            check(HostName(host.value) == host, "a valid name does not read back as itself")
            check(host.value.utf8.count <= HostName.maximumLength, "a valid name is longer than the maximum")
            var value = host.value
            value.withUTF8 { check(HostName.isCanonical($0), "a valid name's value is not canonical") }
            check(host.hasSuffix(host), "a name is not a suffix of itself")
        }

        /// A persisted cache row's text columns, NUL-separated: host, comma-separated addresses,
        /// answer source, decoded as the warm load decodes them.
        private static func storeRow(_ bytes: UnsafeRawBufferPointer) {
            let fields = bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
            _ = HostName(String(decoding: fields[0], as: UTF8.self))
            if fields.count > 1 {
                let text = Array(fields[1])
                let list = text.withUnsafeBufferPointer { AddressList(commaSeparated: $0) }
                let parts = text.split(separator: UInt8(ascii: ",")).map { String(decoding: $0, as: UTF8.self) }
                check(list.strings == AddressList(parts).strings, "commaSeparated differs from the list of its parts")
            }
            if fields.count > 2 { _ = AnswerSource(rawValue: String(decoding: fields[2], as: UTF8.self)) }
        }
    }
#endif
