import Foundation
import HTTPDNSCore
import Testing

@testable import HTTPDNSTap

/// dnstap frames of logged lookups, read back by Debian's `dnstap-ldns` (its own protobuf-c
/// decoder of dnstap.proto and ldns's DNS parser), not by code of this package.
@Suite struct DnstapFrameTests {
    static func entry(
        _ host: String, type: String = "A", format: String = "v1", client: String = "198.51.100.0/24", source: String = "cache",
        status: Int = 200, rcode: String = ""
    ) -> QueryLogEntry {
        QueryLogEntry(
            account: "shop", time: 1_733_400_000.25, host: host, type: type, format: format, client: client, source: source,
            status: status, rcode: rcode, durationMicroseconds: 41, requestID: "", expires: 1_733_400_060)
    }

    /// `dnstap-ldns -x -y`'s YAML for the frames (one run per frame: it reads one hexadecimal payload).
    static func decoded(_ frames: [[UInt8]]) throws -> String {
        try frames.map { frame in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/dnstap-ldns")
            process.arguments = ["-x", "-y"]
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            input.fileHandleForWriting.write(Data(frame.map { String(format: "%02x", $0) }.joined().utf8))
            try input.fileHandleForWriting.close()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text
        }.joined()
    }

    @Test func aLookupIsAClientResponseWithItsQuestionNetworkTimeAndRCODE() throws {
        let frames = DnstapFrame.frames(
            Self.entry("www.example.test", type: "AAAA"), identity: Array("edge-1".utf8), version: Array("httpdnsd 1".utf8))
        #expect(frames.count == 1)
        let yaml = try Self.decoded(frames)
        #expect(yaml.contains("identity: \"edge-1\""), "\(yaml)")
        #expect(yaml.contains("version: \"httpdnsd 1\""), "\(yaml)")
        #expect(yaml.contains("type: CLIENT_RESPONSE"), "\(yaml)")
        #expect(yaml.contains("socket_family: INET"), "\(yaml)")
        #expect(yaml.contains("socket_protocol: TCP"), "\(yaml)")
        #expect(yaml.contains("query_address: \"198.51.100.0\""), "\(yaml)")
        #expect(yaml.contains("2024-12-05 12:00:00.250000"), "\(yaml)")
        #expect(yaml.contains(";www.example.test.\tIN\tAAAA"), "\(yaml)")
        #expect(yaml.contains("rcode: NOERROR"), "\(yaml)")
    }

    @Test func refusalsFailuresAndRFC8484CodesBecomeTheirRCODE() throws {
        let cases: [(QueryLogEntry, String)] = [
            (Self.entry("a.example.test", source: "refused", status: 403), "REFUSED"),
            (Self.entry("b.example.test", source: "failed", status: 502), "SERVFAIL"),
            (Self.entry("c.example.test", type: "TYPE65", format: "rfc8484", source: "upstream", rcode: "NXDOMAIN"), "NXDOMAIN"),
        ]
        for (entry, rcode) in cases {
            let yaml = try Self.decoded(DnstapFrame.frames(entry, identity: [], version: []))
            #expect(yaml.contains("rcode: \(rcode)"), "\(entry.host): \(yaml)")
        }
        let https = try Self.decoded(DnstapFrame.frames(cases[2].0, identity: [], version: []))
        #expect(https.contains("IN\tTYPE65") || https.contains("IN\tHTTPS"), "\(https)")
    }

    @Test func aBatchIsOneFramePerNameAndAnIPv6ClientIsINET6() throws {
        let frames = DnstapFrame.frames(
            Self.entry("a.example.test,b.example.test", type: "A,AAAA", client: "2001:db8:1::/56"), identity: [], version: [])
        #expect(frames.count == 2)
        let yaml = try Self.decoded(frames)
        #expect(yaml.contains(";a.example.test.\tIN\tA") && yaml.contains(";b.example.test.\tIN\tA"), "\(yaml)")
        #expect(yaml.contains("socket_family: INET6") && yaml.contains("query_address: \"2001:db8:1::\""), "\(yaml)")
    }
}
