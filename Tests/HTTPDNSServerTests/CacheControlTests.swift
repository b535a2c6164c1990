import Testing

@testable import HTTPDNSServer

/// `Cache-Control: max-age=N` of RFC 8484 answers, written on the stack for the fast path and
/// as a string for the general path from the same digits.
struct CacheControlTests {
    @Test(arguments: [
        (UInt32(0), "max-age=0"), (7, "max-age=7"), (10, "max-age=10"), (86_400, "max-age=86400"),
        (UInt32.max, "max-age=4294967295"),
    ])
    func theValueIsMaxAgeAndTheSecondsInDecimal(seconds: UInt32, text: String) {
        #expect(CacheControl.withValue(maxAge: seconds) { String(cString: $0) } == text)
        #expect(CacheControl.header(maxAge: seconds) == ("Cache-Control", text))
    }
}
