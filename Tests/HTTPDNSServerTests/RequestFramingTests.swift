import Foundation
import Testing

@testable import HTTPDNSServer

/// The checks made before a request is routed, without sockets: the argument count of a raw
/// request-target, Content-Length with Transfer-Encoding, and EMAS `query` values.
@Suite struct RequestFramingTests {
    /// Reads `target` as the URI callback does, from a mutable C string as libmicrohttpd's
    /// buffer is; returns the record and the buffer's text up to its first NUL afterwards.
    private func read(_ target: String) -> (RawRequestURI, String) {
        var bytes = Array(target.utf8CString)
        return bytes.withUnsafeMutableBufferPointer { buffer in
            let raw = RawRequestURI(UnsafePointer(buffer.baseAddress!))
            return (raw, String(cString: buffer.baseAddress!))
        }
    }

    @Test func aQueryWithMoreThan64ArgumentsIsEmptiedAndMarked() {
        let arguments = (0..<RequestHeadLimits.maximumArguments).map { "a\($0)=1" }
        let (atLimit, kept) = read("/v1/default/resolve?" + arguments.joined(separator: "&"))
        #expect(!atLimit.hasTooManyArguments)
        #expect(kept == "/v1/default/resolve?" + arguments.joined(separator: "&"))
        let over = "/v1/default/resolve?" + (arguments + ["x=1"]).joined(separator: "&")
        let (tooMany, emptied) = read(over)
        #expect(tooMany.hasTooManyArguments)
        #expect(tooMany.length == over.utf8.count, "the length is read before the query is emptied")
        #expect(emptied == "/v1/default/resolve?")
        // Empty arguments count too: libmicrohttpd would keep each.
        #expect(read("/x?" + String(repeating: "&", count: 64)).0.hasTooManyArguments)
        #expect(!read("/x?" + String(repeating: "&", count: 63)).0.hasTooManyArguments)
        #expect(!read("/x").0.hasTooManyArguments)
        let limits = RequestHeadLimits(connectionMemoryLimit: 16_384)
        #expect(limits.refusal(targetLength: 100, tooManyArguments: true, headLength: 200)?.code == .uriTooLong)
        #expect(limits.refusal(targetLength: 100, tooManyArguments: false, headLength: 200) == nil)
    }

    @Test func contentLengthWithAnyTransferEncodingIsRefusedAndClosesTheConnection() {
        #expect(RequestFraming.refusal(transferEncoding: nil) == nil)
        for value in ["chunked", "gzip, chunked", "identity", ""] {
            let refusal = RequestFraming.refusal(transferEncoding: value)
            #expect(refusal?.code.status == 400, "\(value)")
            #expect(refusal?.headers.contains { $0.0 == "Connection" && $0.1 == "close" } == true)
        }
    }

    @Test(arguments: ["4,6,4,6,4", "4,4", "6,6", "4,", ",6", ",", "4,6,", "46", "4 6", "5"])
    func anEMASQueryOtherThan4Or6IsRefused(query: String) {
        guard case .failure(let error) = EMASHandler.families(query) else {
            Issue.record("query=\(query) was accepted")
            return
        }
        #expect(error.code == .invalidParameter)
    }

    @Test func theEMASQueriesTheDocsAllowAreRead() throws {
        #expect(try EMASHandler.families(nil).get() == [.a])
        #expect(try EMASHandler.families("").get() == [.a])
        #expect(try EMASHandler.families("4").get() == [.a])
        #expect(try EMASHandler.families("6").get() == [.aaaa])
        #expect(try EMASHandler.families("4,6").get() == [.a, .aaaa])
        #expect(try EMASHandler.families("6,4").get() == [.a, .aaaa])
        #expect(try EMASHandler.families(" 6 , 4 ").get() == [.a, .aaaa])
    }
}
