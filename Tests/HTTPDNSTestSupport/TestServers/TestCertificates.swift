import Foundation

/// A throw-away certificate authority made with `openssl` in a temp directory, and server
/// certificates it signs (ECDSA P-256), for HTTPS tests.
public struct TestCertificates: Sendable {
    /// The directory holding every file.
    public let directory: URL
    /// The CA certificate (PEM), for `curl --cacert`.
    public let caPath: String

    /// A new CA.
    public static func make() async throws -> TestCertificates {
        let directory = try TestPaths.makeTemporaryDirectory("tls")
        try await openssl(
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=httpdnsd test CA",
            ], in: directory)
        return TestCertificates(directory: directory, caPath: directory.appendingPathComponent("ca.pem").path)
    }

    /// A server certificate named `name` (its files `name.pem`, `name.key`) for the DNS name
    /// `dnsName` (and `otherNames`, which may be wildcards such as `*.dot.example.test`) and
    /// 127.0.0.1, with serial number `serial` (hex, e.g. "1001").
    public func issue(
        _ name: String, dnsName: String = "localhost", otherNames: [String] = [], serial: String
    ) async throws -> (certificate: String, key: String) {
        let extensions = directory.appendingPathComponent("\(name).ext")
        let names = ([dnsName] + otherNames).map { "DNS:\($0)" }.joined(separator: ",")
        try "subjectAltName=\(names),IP:127.0.0.1\n".write(to: extensions, atomically: true, encoding: .utf8)
        try await Self.openssl(
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=\(dnsName)",
            ], in: directory)
        try await Self.openssl(
            [
                "x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-set_serial", "0x\(serial)", "-days", "2", "-extfile", "\(name).ext", "-out", "\(name).pem",
            ], in: directory)
        return (directory.appendingPathComponent("\(name).pem").path, directory.appendingPathComponent("\(name).key").path)
    }

    /// The serial number (lowercase hex, no leading zeros) of the certificate a TLS server on
    /// 127.0.0.1:`port` presents to a new connection.
    public func servedSerial(port: UInt16) async throws -> String {
        let script = "echo | openssl s_client -connect 127.0.0.1:\(port) -servername localhost 2>/dev/null | openssl x509 -noout -serial"
        let (status, output) = try await ExternalTool.run("sh", ["-c", script], timeout: 15)
        guard status == 0, let line = output.split(separator: "\n").first(where: { $0.hasPrefix("serial=") }) else {
            throw HarnessError("no served certificate on port \(port): \(output)")
        }
        let hex = line.dropFirst("serial=".count).lowercased()
        let trimmed = hex.drop { $0 == "0" }
        return trimmed.isEmpty ? "0" : String(trimmed)
    }

    @discardableResult
    static func openssl(_ arguments: [String], in directory: URL) async throws -> String {
        let (status, output) = try await ExternalTool.run("openssl", arguments, timeout: 30, in: directory)
        guard status == 0 else { throw HarnessError("openssl \(arguments.joined(separator: " ")) failed: \(output)") }
        return output
    }
}
