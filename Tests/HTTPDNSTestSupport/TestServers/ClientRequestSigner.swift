import Foundation

/// Signs client requests the way docs/security.md specifies signature v1, in Python (`hmac`,
/// `hashlib`, `urllib.parse.quote`), independently of the server's canonicaliser: what a client
/// following the documentation would send.
public enum ClientRequestSigner {
    public struct Signed: Sendable {
        /// The canonical string that was signed.
        public var canonical: String
        /// The lower-case hex signature.
        public var sign: String
        /// The request's arguments, percent-encoded and sorted as signed, without the signature.
        public var query: String
        public var t: String

        /// `query` plus `kid`, `t` and `sign`: a URL query string.
        public func signedQuery(kid: String) -> String {
            (query.isEmpty ? "" : query + "&") + "kid=\(kid)&t=\(t)&sign=\(sign)"
        }

        /// The `Authorization` header form.
        public func authorization(kid: String) -> String { "HTTPDNS-HMAC-SHA256 kid=\(kid),t=\(t),sign=\(sign)" }
    }

    private static let script = #"""
        import sys, json, hmac, hashlib, urllib.parse as u
        r = json.loads(sys.argv[1])
        enc = lambda s: u.quote(s, safe="")
        pairs = sorted(((enc(k), enc(v)) for k, v in r["args"]), key=lambda p: p[0].encode())
        query = "&".join(k + "=" + v for k, v in pairs)
        canonical = "\n".join(["HTTPDNS-HMAC-SHA256", r["method"], u.quote(r["path"], safe="/"), query, r["t"],
                               hashlib.sha256(bytes.fromhex(r["body"])).hexdigest()])
        sign = hmac.new(r["secret"].encode(), canonical.encode(), hashlib.sha256).hexdigest()
        print(json.dumps({"canonical": canonical, "sign": sign, "query": query}))
        """#

    /// Signs `method path?args` with `body`, valid until `t` (Unix seconds).
    public static func sign(
        method: String, path: String, args: [(String, String)] = [], body: [UInt8] = [], secret: String, t: Int
    ) throws -> Signed {
        let input = TestJSON.object([
            "method": .string(method), "path": .string(path), "t": .string(String(t)), "secret": .string(secret),
            "body": .string(body.map { String(format: "%02x", $0) }.joined()),
            "args": .array(args.map { .array([.string($0.0), .string($0.1)]) }),
        ]).encoded()
        let run = try CommandRun.run("/usr/bin/python3", ["-c", script, input], mergingStandardError: false)
        let data = run.output
        guard run.status == 0, let result = try? TestJSON(parsing: Array(data)),
            let canonical = result["canonical"]?.string, let sign = result["sign"]?.string, let query = result["query"]?.string
        else {
            throw HarnessError("python3 signer failed: \(String(decoding: data, as: UTF8.self))")
        }
        return Signed(canonical: canonical, sign: sign, query: query, t: String(t))
    }

    /// Unix seconds now, plus `offset`.
    public static func expiry(in offset: Int) -> Int { Int(Date().timeIntervalSince1970) + offset }
}
