import CMicroHTTPD
import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

/// What a GnuTLS call's result means to a non-blocking DoT connection. `TLSStep.of` is the one
/// place GnuTLS result codes are read (setup, handshake, record reads and writes).
enum TLSStep: Equatable {
    /// Done: the bytes read or written (0 for a call that moves none, such as the handshake).
    case done(Int)
    /// The socket has nothing more now (`GNUTLS_E_AGAIN`): wait for it (`TLSSession.wantsWrite`
    /// says in which direction) and call again.
    case again
    /// A non-fatal condition (an interrupted call, a warning alert, a renegotiation request,
    /// which is not honoured): call again at once.
    case retry
    /// The peer ended the session: close_notify, or the socket closed without one.
    case closed
    /// A fatal error; the text names the call and GnuTLS's reason (no key material).
    case failed(String)

    /// The step `code`, returned by `call`, stands for. A positive code is a count of bytes;
    /// 0 from a record read is the peer's close_notify.
    static func of(_ code: Int, _ call: Call) -> TLSStep {
        if code > 0 { return .done(code) }
        if code == 0 { return call == .receive ? .closed : .done(0) }
        let error = Int32(truncatingIfNeeded: code)
        switch error {
        case GNUTLS_E_AGAIN: return .again
        case GNUTLS_E_INTERRUPTED: return .retry
        case GNUTLS_E_PREMATURE_TERMINATION: return .closed
        default:
            if gnutls_error_is_fatal(error) == 0 { return .retry }
            let reason = gnutls_strerror(error).map { String(cString: $0) } ?? "GnuTLS error"
            return .failed("\(call.rawValue): \(reason) (GnuTLS \(error))")
        }
    }

    enum Call: String {
        case setup = "session setup"
        case handshake
        case receive = "record read"
        case send = "record write"
    }
}

/// What every DoT session of one listener shares: the certificate credentials, which ask the
/// listener's `TLSCertificateStore` for its current pair at every handshake (so a pair the store
/// reloads on SIGHUP or a file change serves the next handshake), and the protocol priorities:
/// TLS 1.2 and 1.3 only, as on the HTTPS listeners. Made once; read by the loop thread only.
final class TLSContext: @unchecked Sendable {
    let store: TLSCertificateStore
    let credentials: gnutls_certificate_credentials_t
    let priorities: gnutls_priority_t

    init(store: TLSCertificateStore) throws(DoTServerError) {
        self.store = store
        var credentials: gnutls_certificate_credentials_t?
        guard case .done = TLSStep.of(Int(gnutls_certificate_allocate_credentials(&credentials)), .setup), let credentials else {
            throw DoTServerError("cannot allocate TLS credentials")
        }
        var priorities: gnutls_priority_t?
        let result = HTTPServer.tlsPriorities.withUTF8Buffer { text in
            text.withMemoryRebound(to: CChar.self) { gnutls_priority_init(&priorities, $0.baseAddress, nil) }
        }
        guard case .done = TLSStep.of(Int(result), .setup), let priorities else {
            gnutls_certificate_free_credentials(credentials)
            throw DoTServerError("cannot set the TLS priorities")
        }
        gnutls_certificate_set_retrieve_function2(credentials, Self.retrieve)
        self.credentials = credentials
        self.priorities = priorities
    }

    deinit {
        gnutls_priority_deinit(priorities)
        gnutls_certificate_free_credentials(credentials)
    }

    /// `gnutls_certificate_retrieve_function2`: the store's current pair. The session's pointer
    /// is the store (`TLSSession.init`), which the context keeps alive, and the store keeps a
    /// replaced pair alive longer than any handshake it was handed to.
    static let retrieve: chttpdns_tls_retrieve = { session, _, _, _, _, chain, chainLength, key in
        guard let session, let chain, let chainLength, let key, let raw = gnutls_session_get_ptr(session) else { return -1 }
        let credentials = Unmanaged<TLSCertificateStore>.fromOpaque(raw).takeUnretainedValue().currentCredentials
        chain.pointee = credentials.chain
        chainLength.pointee = credentials.count
        key.pointee = credentials.key
        return 0
    }
}

/// One server-side TLS session over a non-blocking socket, driven by the loop: `handshake`,
/// then `receive` and `send` until one of them says `.closed` or `.failed`. Owns the GnuTLS
/// session, not the socket.
final class TLSSession {
    private let session: gnutls_session_t

    init(fd: Int32, context: TLSContext) throws(DoTServerError) {
        var made: gnutls_session_t?
        guard case .done = TLSStep.of(Int(chttpdns_tls_server_session(&made, fd)), .setup), let made else {
            throw DoTServerError("cannot start a TLS session")
        }
        session = made
        let steps = [
            TLSStep.of(Int(gnutls_priority_set(session, context.priorities)), .setup),
            TLSStep.of(Int(gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(context.credentials))), .setup),
        ]
        for case .failed(let reason) in steps { throw DoTServerError(reason) }
        gnutls_session_set_ptr(session, Unmanaged.passUnretained(context.store).toOpaque())
    }

    deinit { gnutls_deinit(session) }

    /// A fatal failure sends the client the alert it calls for (`protocol_version` to an old
    /// client), as far as the socket takes it now.
    func handshake() -> TLSStep {
        let code = gnutls_handshake(session)
        let step = TLSStep.of(Int(code), .handshake)
        if case .failed = step { _ = gnutls_alert_send_appropriate(session, code) }
        return step
    }

    /// Decrypted bytes into `buffer`.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> TLSStep {
        TLSStep.of(gnutls_record_recv(session, buffer.baseAddress, buffer.count), .receive)
    }

    /// Writes up to one record of `bytes`. After `.again` the next call must pass the same
    /// bytes again (GnuTLS holds the record already encrypted and sends it then).
    func send(_ bytes: UnsafeRawBufferPointer) -> TLSStep {
        TLSStep.of(gnutls_record_send(session, bytes.baseAddress, bytes.count), .send)
    }

    /// Whether the call that returned `.again` waits for the socket to be writable (else readable).
    var wantsWrite: Bool { gnutls_record_get_direction(session) == 1 }

    /// The name the client asked for (Server Name Indication), nil without one.
    var serverName: String? {
        var name = [UInt8](repeating: 0, count: 256)
        var size = name.count
        var type: UInt32 = 0
        let result = name.withUnsafeMutableBytes { gnutls_server_name_get(session, $0.baseAddress, &size, &type, 0) }
        guard case .done = TLSStep.of(Int(result), .setup), type == GNUTLS_NAME_DNS.rawValue else { return nil }
        return String(decoding: name.prefix(while: { $0 != 0 }).prefix(size), as: UTF8.self)
    }

    /// The negotiated protocol's name (`TLS1.3`), for the log.
    var version: String {
        gnutls_protocol_get_name(gnutls_protocol_get_version(session)).map { String(cString: $0) } ?? "?"
    }

    /// Sends close_notify if the socket takes it now; never waits.
    func bye() { _ = gnutls_bye(session, GNUTLS_SHUT_WR) }
}
