import Foundation

/// `scripts/test/enc_client.py`: sends one encrypted request (docs/encryption.md) to httpdnsd
/// with its own AES-256-GCM (Python's `cryptography`, Debian's `python3-cryptography`), so the
/// tests do not check the server's cryptography against itself.
public struct EncryptedClient: Sendable {
    /// What the client saw.
    public struct Exchange: Sendable, CustomStringConvertible {
        public var status: Int
        public var contentType: String
        /// The answer was `application/octet-stream`.
        public var sealed: Bool
        /// The sealed answer decrypted under the associated data bound to this request.
        public var opened: Bool
        /// The answer's JSON (decrypted when sealed).
        public var body: TestJSON

        public var description: String { "\(status) \(contentType) sealed=\(sealed) opened=\(opened) \(body)" }
    }

    public enum Tamper: String, Sendable {
        /// One bit of the sealed query's ciphertext.
        case enc
        /// One bit of the sealed body's tag.
        case body
    }

    /// `http://127.0.0.1:PORT`.
    public let base: String
    /// The account's `aesSecretKey`, 64 hex digits.
    public let key: String

    public init(port: UInt16, key: String) {
        self.base = "http://127.0.0.1:\(port)"
        self.key = key
    }

    /// Sends `method path` with `query` (and `body`, if any) encrypted.
    public func send(_ path: String, method: String = "GET", query: String = "", body: String = "", tamper: Tamper? = nil) async throws
        -> Exchange
    {
        var arguments = ["--method", method, "--path", path, "--query", query, "--body", body]
        if let tamper { arguments += ["--tamper", tamper.rawValue] }
        let json = try await run(arguments)
        return Exchange(
            status: json["status"]?.int ?? 0, contentType: json["content_type"]?.string ?? "", sealed: json["sealed"]?.bool ?? false,
            opened: json["opened"]?.bool ?? false, body: json["body"] ?? .null)
    }

    /// A sealed request for a caller that signs and sends it itself.
    public struct Prepared: Sendable {
        /// The value of `enc`.
        public var enc: String
        /// The sealed body (empty when there is none).
        public var body: [UInt8]
        /// base64url of the request's nonce: the answer is bound to it.
        public var n: String
    }

    /// Seals `query` (and `body`) for `method path` without sending anything.
    public func prepare(_ path: String, method: String = "GET", query: String = "", body: String = "") async throws -> Prepared {
        let json = try await run(["--prepare", "--method", method, "--path", path, "--query", query, "--body", body])
        let hex = Array((json["body_hex"]?.string ?? "").utf8)
        let bytes = stride(from: 0, to: hex.count, by: 2).map { UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
        return Prepared(enc: json["enc"]?.string ?? "", body: bytes, n: json["n"]?.string ?? "")
    }

    /// Opens a sealed answer to the request `prepared` was; nil when it does not open.
    public func openAnswer(_ sealed: [UInt8], _ path: String, method: String = "GET", prepared: Prepared) async throws -> TestJSON? {
        let hex = sealed.map { String(format: "%02x", $0) }.joined()
        let json = try await run(["--method", method, "--path", path, "--open-answer", hex, "--n=\(prepared.n)"])
        return json["opened"]?.bool == true ? json["body"] : nil
    }

    private func run(_ extra: [String]) async throws -> TestJSON {
        let python =
            FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : try TestPaths.executable("python3")
        let directory = try TestPaths.makeTemporaryDirectory("enc")
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/enc_client.py").path
        let arguments = [script, "--base", base, "--key", key] + extra
        let process = try await ChildProcess.launch(
            name: "enc_client", executable: python, arguments: arguments, environment: TestPaths.childEnvironment(),
            logURL: directory.appendingPathComponent("enc_client.log"))
        guard await process.waitForExit(timeout: 30) else {
            await process.kill()
            throw HarnessError("enc_client.py did not finish: \(process.output())")
        }
        await process.stop()
        let output = process.output()
        guard process.terminationStatus == 0, let line = output.split(separator: "\n").last,
            let json = try? TestJSON(parsing: Array(line.utf8))
        else {
            throw HarnessError("enc_client.py failed (status \(String(describing: process.terminationStatus))): \(output)")
        }
        return json
    }
}
