import Foundation
import Testing

@testable import HTTPDNSUpstream

struct Base64URLTests {
    /// Foundation's base64, made URL-safe and unpadded, is the reference for every length that
    /// ends a group differently (0, 1 and 2 bytes left over).
    @Test func matchesFoundationsBase64MadeURLSafeForEveryTailLength() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var reference = Data(bytes).base64EncodedString()
            reference = reference.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            while reference.last == "=" { reference.removeLast() }
            #expect(Base64URL.encode(bytes) == reference, "length \(length)")
        }
    }
}
