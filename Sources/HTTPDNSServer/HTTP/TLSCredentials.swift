import CMicroHTTPD
import Foundation
import HTTPDNSCore

/// A certificate chain and its private key in the form GnuTLS's certificate callback hands out
/// (`gnutls_pcert_st` list and `gnutls_privkey_t`), read from PEM text and checked: the chain
/// parses, the key parses, and the key is the one of the chain's first certificate.
///
/// Immutable once made; GnuTLS reads the chain and key of an instance during handshakes that
/// began while it was current, so `TLSCertificateStore` keeps replaced ones alive for a while.
final class TLSCredentials: @unchecked Sendable {
    /// At most this many certificates in a chain file.
    static let maxChain = 16

    let chain: UnsafeMutablePointer<gnutls_pcert_st>
    let count: UInt32
    let key: gnutls_privkey_t
    /// The leaf's serial number, lowercase hex (for logs and tests).
    let serial: String
    /// The leaf's expiry (Unix seconds).
    let notAfter: Int

    /// Parses and checks the pair. Errors name `certKey` or `keyKey` (the setting the operator
    /// wrote) and say which check failed; they never include key material.
    init(certificatePEM: [UInt8], keyPEM: [UInt8], certKey: String, keyKey: String) throws(ConfigError) {
        guard Self.containsPEM(certificatePEM, label: "CERTIFICATE") else {
            throw ConfigError(key: certKey, "is not a PEM certificate (no -----BEGIN CERTIFICATE----- line)")
        }
        guard Self.containsPEM(keyPEM, label: "PRIVATE KEY") else {
            throw ConfigError(key: keyKey, "is not a PEM private key (no -----BEGIN ... PRIVATE KEY----- line)")
        }
        let chain = UnsafeMutablePointer<gnutls_pcert_st>.allocate(capacity: Self.maxChain)
        chain.initialize(repeating: gnutls_pcert_st(), count: Self.maxChain)
        var count = UInt32(Self.maxChain)
        let imported = certificatePEM.withUnsafeBufferPointer { bytes in
            var datum = chttpdns_tls_datum(bytes.baseAddress, UInt32(bytes.count))
            return gnutls_pcert_list_import_x509_raw(chain, &count, &datum, GNUTLS_X509_FMT_PEM, 0)
        }
        guard imported == GNUTLS_E_SUCCESS, count > 0 else {
            chain.deallocate()
            throw ConfigError(key: certKey, "cannot be read as a certificate chain: \(Self.describe(imported))")
        }
        var key: gnutls_privkey_t?
        var result = gnutls_privkey_init(&key)
        if result == GNUTLS_E_SUCCESS, let key {
            result = keyPEM.withUnsafeBufferPointer { bytes in
                var datum = chttpdns_tls_datum(bytes.baseAddress, UInt32(bytes.count))
                return gnutls_privkey_import_x509_raw(key, &datum, GNUTLS_X509_FMT_PEM, nil, 0)
            }
        }
        guard result == GNUTLS_E_SUCCESS, let key else {
            Self.release(chain: chain, count: count, key: key)
            throw ConfigError(key: keyKey, "cannot be read as an unencrypted private key: \(Self.describe(result))")
        }
        guard let matches = Self.publicKeysMatch(key, chain.pointee.pubkey), matches else {
            Self.release(chain: chain, count: count, key: key)
            throw ConfigError(key: keyKey, "is not the private key of the certificate in \(certKey)")
        }
        let (serial, notAfter) = Self.leafDetails(&chain.pointee)
        self.chain = chain
        self.count = count
        self.key = key
        self.serial = serial
        self.notAfter = notAfter
    }

    deinit { Self.release(chain: chain, count: count, key: key) }

    private static func release(chain: UnsafeMutablePointer<gnutls_pcert_st>, count: UInt32, key: gnutls_privkey_t?) {
        for index in 0..<Int(count) { gnutls_pcert_deinit(chain + index) }
        chain.deallocate()
        if let key { gnutls_privkey_deinit(key) }
    }

    private static func containsPEM(_ bytes: [UInt8], label: String) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.split(separator: "\n").contains { line in
            line.hasPrefix("-----BEGIN ") && line.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("\(label)-----")
        }
    }

    /// Whether the key's public half is the certificate's public key (compared as DER
    /// SubjectPublicKeyInfo); nil when either cannot be exported.
    private static func publicKeysMatch(_ key: gnutls_privkey_t, _ certificateKey: gnutls_pubkey_t?) -> Bool? {
        guard let certificateKey else { return nil }
        var derived: gnutls_pubkey_t?
        guard gnutls_pubkey_init(&derived) == GNUTLS_E_SUCCESS, let derived else { return nil }
        defer { gnutls_pubkey_deinit(derived) }
        guard gnutls_pubkey_import_privkey(derived, key, 0, 0) == GNUTLS_E_SUCCESS,
            let ours = export(derived), let theirs = export(certificateKey)
        else { return nil }
        return ours == theirs
    }

    private static func export(_ key: gnutls_pubkey_t) -> [UInt8]? {
        var datum = gnutls_datum_t()
        guard gnutls_pubkey_export2(key, GNUTLS_X509_FMT_DER, &datum) == GNUTLS_E_SUCCESS, let data = datum.data else { return nil }
        defer { chttpdns_tls_free(data) }
        return Array(UnsafeBufferPointer(start: data, count: Int(datum.size)))
    }

    private static func leafDetails(_ leaf: UnsafeMutablePointer<gnutls_pcert_st>) -> (String, Int) {
        var certificate: gnutls_x509_crt_t?
        guard gnutls_pcert_export_x509(leaf, &certificate) == GNUTLS_E_SUCCESS, let certificate else { return ("?", 0) }
        defer { gnutls_x509_crt_deinit(certificate) }
        var serial = [UInt8](repeating: 0, count: 64)
        var size = serial.count
        let hex =
            gnutls_x509_crt_get_serial(certificate, &serial, &size) == GNUTLS_E_SUCCESS
            ? serial.prefix(size).map { String($0, radix: 16).leftPadded(2) }.joined() : "?"
        return (hex, Int(gnutls_x509_crt_get_expiration_time(certificate)))
    }

    private static func describe(_ code: Int32) -> String {
        guard let text = gnutls_strerror(code) else { return "GnuTLS error \(code)" }
        return "\(String(cString: text)) (GnuTLS \(code))"
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
