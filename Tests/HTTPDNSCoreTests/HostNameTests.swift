import HTTPDNSCore
import Testing

@Suite struct HostNameTests {
    /// A label of `length` letters.
    private func label(_ length: Int, _ letter: Character = "a") -> String { String(repeating: letter, count: length) }

    @Test func labelOf63CharactersIsAccepted() {
        #expect(HostName(label(63) + ".com")?.value == label(63) + ".com")
    }

    @Test func labelOf64CharactersIsRejected() {
        #expect(HostName(label(64) + ".com") == nil)
        #expect(HostName(label(64)) == nil)
    }

    /// Three labels of 63 and a last one that brings the name to `total` characters.
    private func name(totalLength total: Int) -> String {
        let prefix = [label(63), label(63, "b"), label(63, "c")].joined(separator: ".") + "."
        return prefix + label(total - prefix.count, "d")
    }

    @Test func nameOf253CharactersIsAccepted() {
        let text = name(totalLength: 253)
        #expect(text.count == 253)
        #expect(HostName(text)?.value == text)
    }

    @Test func nameOf253CharactersWithTrailingDotIsAccepted() {
        let text = name(totalLength: 253)
        #expect(HostName(text + ".")?.value == text)
    }

    @Test func nameOf254CharactersIsRejected() {
        let text = name(totalLength: 254)
        #expect(text.count == 254)
        #expect(HostName(text) == nil)
    }

    @Test(arguments: ["www.example.com", "a", "a-b.c-d.example", "123.example", "_dmarc.example.com", "_sip._tcp.example.com", "x1.y2"])
    func lettersDigitsHyphensAndUnderscoresAreAccepted(_ text: String) {
        #expect(HostName(text)?.value == text)
    }

    @Test(arguments: ["exa mple.com", "exa!mple.com", "example.com/", "ex*ample.com", "a@b.com", "a:b", "exam\u{0}ple.com", "a,b.com"])
    func otherCharactersAreRejected(_ text: String) {
        #expect(HostName(text) == nil)
    }

    @Test(arguments: ["-example.com", "example-.com", "www.-example.com", "www.example-", "-"])
    func labelStartingOrEndingWithHyphenIsRejected(_ text: String) {
        #expect(HostName(text) == nil)
    }

    @Test(arguments: ["", ".", "..", "a..b", ".example.com", "example..com"])
    func emptyLabelsAreRejected(_ text: String) {
        #expect(HostName(text) == nil)
    }

    @Test func nameEndingInTwoDotsIsRejected() {
        #expect(HostName("example.com..") == nil)
    }

    @Test(arguments: ["bücher.example", "例え.jp", "münchen.de", "caf\u{E9}.fr"])
    func nonASCIIInternationalNamesAreRejected(_ text: String) {
        #expect(HostName(text) == nil)
    }

    @Test func punycodeNamesAreAccepted() {
        #expect(HostName("xn--bcher-kva.example")?.value == "xn--bcher-kva.example")
        #expect(HostName("XN--R8JZ45G.jp")?.value == "xn--r8jz45g.jp")
    }

    @Test func trailingDotIsStripped() {
        #expect(HostName("www.example.com.")?.value == "www.example.com")
        #expect(HostName("www.example.com.") == HostName("www.example.com"))
    }

    @Test func upperCaseIsFolded() {
        #expect(HostName("WWW.Example.COM")?.value == "www.example.com")
        #expect(HostName("WWW.Example.COM") == HostName("www.example.com"))
    }

    @Test(arguments: [
        "www.example.com", "WWW.Example.COM.", "a", "_sip._tcp.x", "a-b.c", "", ".", "a..b", "-a", "a-",
        "a-.b", "a.-b", "a b", "a/b", "é.example", String(repeating: "a", count: 63), String(repeating: "a", count: 64),
        String(repeating: "a", count: 64) + ".b", "b." + String(repeating: "a", count: 64),
    ])
    func bytesAndStringsAreReadAlike(text: String) {
        var copy = text
        let fromBytes = copy.withUTF8 { HostName(utf8: UnsafeRawBufferPointer($0)) }
        #expect(fromBytes == HostName(text))
        let canonical = copy.withUTF8 { HostName.isCanonical($0) }
        #expect(canonical == (HostName(text)?.value == text))
    }

    @Test func hasSuffixMatchesWholeLabelsOnly() {
        let name = HostName.valid("a.b.example.com")
        #expect(name.hasSuffix(.valid("example.com")))
        #expect(name.hasSuffix(.valid("a.b.example.com")))
        #expect(!name.hasSuffix(.valid("ample.com")))
        #expect(!HostName.valid("example.com").hasSuffix(.valid("a.example.com")))
    }
}
