import Foundation
import HTTPDNSTestSupport

/// deploy/haproxy.cfg, the TLS + HTTP/2 front of the deploy examples, made to run on loopback:
/// only its listen addresses, its certificate path, its servers and its global `maxconn` (which
/// haproxy needs twice as many descriptors for as a test machine may allow) change; every
/// other line is the shipped file's, so a test through it tests the file.
enum DeployHaproxy {
    static let path = TestPaths.packageRoot.appendingPathComponent("deploy/haproxy.cfg")
    /// The certificate path the deploy examples mount.
    static let shippedCertificate = "/usr/local/etc/haproxy/tls/tls.crt"

    static func text() throws -> String { try String(contentsOf: path, encoding: .utf8) }

    /// The file with `frontend httpdns` on 127.0.0.1:`plainPort`, `frontend doh` on
    /// 127.0.0.1:`dohPort` with the certificate `certificate` (its key beside it, as
    /// `ssl-load-extra-del-ext` finds it), and `backend replicas` over `backends` (127.0.0.1).
    /// Throws when the file no longer has the lines it rewrites.
    static func loopback(plainPort: UInt16, dohPort: UInt16, certificate: String, backends: [UInt16]) throws -> String {
        var lines: [String] = []
        var section = ""
        var rewritten = Set<String>()
        for line in try text().split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let words = line.split(separator: " ").map(String.init)
            if !line.hasPrefix(" "), !line.hasPrefix("#"), !words.isEmpty { section = words.joined(separator: " ") }
            switch (section, words.first) {
            case ("global", "maxconn"):
                lines.append("    maxconn 4096")
                rewritten.insert("maxconn")
            case ("frontend httpdns", "bind"):
                guard words == ["bind", ":8080"] else { throw HarnessError("unexpected plain bind: \(line)") }
                lines.append("    bind 127.0.0.1:\(plainPort)")
                rewritten.insert("plain bind")
            case ("frontend doh", "bind"):
                guard words.count > 5, words[1] == ":8443", words[2] == "ssl", words[3] == "crt", words[4] == shippedCertificate else {
                    throw HarnessError("unexpected TLS bind: \(line)")
                }
                let rest = words[5...].joined(separator: " ")
                lines.append("    bind 127.0.0.1:\(dohPort) ssl crt \(certificate) \(rest)")
                rewritten.insert("TLS bind")
            case ("backend replicas", "server"):
                if !rewritten.contains("servers") {
                    lines += backends.enumerated().map { "    server r\($0.offset + 1) 127.0.0.1:\($0.element)" }
                }
                rewritten.insert("servers")
            default:
                lines.append(line)
            }
        }
        guard rewritten == ["maxconn", "plain bind", "TLS bind", "servers"] else {
            throw HarnessError("deploy/haproxy.cfg lacks what the test rewrites: only \(rewritten.sorted())")
        }
        return lines.joined(separator: "\n")
    }

    /// The lines of the section headed `header` (`global`, `frontend doh`, ...) in the haproxy
    /// configuration `text`, without blank and comment lines, indentation trimmed.
    static func section(_ header: String, of text: String) -> [String] {
        var inside = false
        var lines: [String] = []
        for line in text.split(separator: "\n").map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let isHeader = ["global", "defaults", "frontend", "backend", "listen"].contains(trimmed.split(separator: " ")[0])
            if isHeader {
                inside = trimmed == header
            } else if inside {
                lines.append(trimmed.split(separator: " ").joined(separator: " "))
            }
        }
        return lines
    }
}
