import HTTPDNSCore
import Testing

@testable import HTTPDNSUpstream

/// One mapping from upstream HTTP status to error code, shared by all adapters.
struct HTTPStatusErrorTests {
    @Test(arguments: [
        (400, UpstreamError.Code.badRequest), (401, .permission), (403, .permission), (404, .notFound),
        (500, .httpStatus), (502, .httpStatus), (301, .httpStatus), (429, .httpStatus),
    ])
    func statusMapsToCode(status: Int, code: UpstreamError.Code) {
        let error = HTTPStatusError.error(for: status, body: Array(#"{"code":"X"}"#.utf8))
        #expect(error?.code == code)
        #expect(error?.underlying == status)
    }

    @Test(arguments: [200, 204, 299])
    func successStatusIsNoError(status: Int) {
        #expect(HTTPStatusError.error(for: status, body: []) == nil)
    }
}
