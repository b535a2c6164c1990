import CMicroHTTPD
import Dispatch
import Foundation
import HTTPDNSCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The certificate and key an HTTPS listener serves, from two PEM files, replaceable while it
/// runs: `reload` (on SIGHUP) and a watcher thread that polls the files' identity (device,
/// inode, size, modification and change times; a Kubernetes Secret volume swaps a symlink, an
/// ACME client rewrites the files) pick up a new pair. A new pair that does not load (unreadable,
/// not PEM, key not matching) is refused with a log line and the current one kept.
///
/// libmicrohttpd asks for the pair at every handshake through `retrieve`
/// (`MHD_OPTION_HTTPS_CERT_CALLBACK`); connections already open keep their session. A replaced
/// pair is kept alive for `retirementGrace` seconds, longer than any handshake that may have been
/// handed it (handshakes are cut by the request-read deadline and the idle timeout).
public final class TLSCertificateStore: Sendable {
    /// The setting names errors and logs use for the two files.
    public static let certificateKey = "tlsCert"
    public static let privateKeyKey = "tlsKey"
    static let retirementGrace = 600

    public let certificatePath: String
    public let keyPath: String

    private struct FileIdentity: Equatable {
        var device: UInt, inode: UInt, size: Int, modified: Int, changed: Int
    }

    private struct State {
        var current: TLSCredentials
        var retired: [(credentials: TLSCredentials, at: Int)] = []
        /// The files as last tried (loaded or refused), so a refused pair is logged once.
        var identity: [FileIdentity?]
    }

    private let state: Mutex<State>
    private let watcherStop = Mutex<Bool>(false)
    private let watcherWake = DispatchSemaphore(value: 0)
    private let watcherDone = DispatchSemaphore(value: 0)
    private let watching = Atomic<Bool>(false)

    /// Loads and checks the pair; errors name `tlsCert` or `tlsKey`.
    public init(certificatePath: String, keyPath: String) throws(ConfigError) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        let identity = [Self.identity(certificatePath), Self.identity(keyPath)]
        let credentials = try Self.load(certificatePath: certificatePath, keyPath: keyPath)
        state = Mutex(State(current: credentials, identity: identity))
    }

    /// Serial number (hex) and expiry of the certificate served now.
    public var current: (serial: String, notAfter: Int) {
        let credentials = state.withLock { $0.current }
        return (credentials.serial, credentials.notAfter)
    }

    var currentCredentials: TLSCredentials { state.withLock { $0.current } }

    /// Reads both files again and serves them from the next handshake on; on failure logs why
    /// and keeps the current pair. Returns whether a new pair is served.
    @discardableResult
    public func reload(reason: String) -> Bool {
        let identity = [Self.identity(certificatePath), Self.identity(keyPath)]
        let loaded: TLSCredentials
        do {
            loaded = try Self.load(certificatePath: certificatePath, keyPath: keyPath)
        } catch {
            state.withLock { $0.identity = identity }
            Log.error("TLS: new certificate refused (\(reason)), still serving the previous one: \(error)")
            return false
        }
        let now = ConnectionTracker.now() / 1000
        state.withLock { state in
            state.retired.removeAll { now - $0.at > Self.retirementGrace }
            state.retired.append((state.current, now))
            state.current = loaded
            state.identity = identity
        }
        Log.info("TLS: serving certificate serial \(loaded.serial) (\(reason)), expires at \(Log.utcTime(unixSeconds: loaded.notAfter))")
        return true
    }

    /// Reloads when either file changed since the last attempt.
    @discardableResult
    public func reloadIfChanged() -> Bool {
        let identity = [Self.identity(certificatePath), Self.identity(keyPath)]
        guard state.withLock({ $0.identity != identity }) else { return false }
        return reload(reason: "files changed")
    }

    /// Starts a thread that calls `reloadIfChanged` every `interval` seconds.
    public func startWatching(interval: Double) {
        guard !watching.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            ThreadName.setCurrent("httpdnsd-tls")
            while !watcherStop.withLock({ $0 }) {
                _ = watcherWake.wait(timeout: .now() + interval)
                if watcherStop.withLock({ $0 }) { break }
                reloadIfChanged()
            }
            watcherDone.signal()
        }
        thread.start()
    }

    /// Stops the watcher thread and waits for it. Idempotent.
    public func stopWatching() {
        guard watching.exchange(false, ordering: .acquiringAndReleasing) else { return }
        watcherStop.withLock { $0 = true }
        watcherWake.signal()
        watcherDone.wait()
    }

    private static func load(certificatePath: String, keyPath: String) throws(ConfigError) -> TLSCredentials {
        let certificate = try read(certificatePath, key: certificateKey)
        let key = try read(keyPath, key: privateKeyKey)
        return try TLSCredentials(certificatePEM: certificate, keyPEM: key, certKey: certificateKey, keyKey: privateKeyKey)
    }

    private static func read(_ path: String, key: String) throws(ConfigError) -> [UInt8] {
        do {
            return [UInt8](try ConfigFile.read(path))
        } catch {
            throw ConfigError(key: key, error.description)
        }
    }

    private static func identity(_ path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(
            device: UInt(info.st_dev), inode: UInt(info.st_ino), size: Int(info.st_size),
            modified: info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec,
            changed: info.st_ctim.tv_sec * 1_000_000_000 + info.st_ctim.tv_nsec)
    }

    /// `gnutls_certificate_retrieve_function2` for `MHD_OPTION_HTTPS_CERT_CALLBACK`: finds the
    /// store through the session's libmicrohttpd connection and its `TrackedConnection`.
    static let retrieve: chttpdns_tls_retrieve = { session, _, _, _, _, chain, chainLength, key in
        guard let session, let chain, let chainLength, let key,
            let connection = chttpdns_tls_session_connection(session),
            let raw = chttpdns_mhd_socket_context(connection)
        else { return -1 }
        return Unmanaged<TrackedConnection>.fromOpaque(raw)._withUnsafeGuaranteedRef { record -> Int32 in
            guard let credentials = record.certificates?.currentCredentials else { return -1 }
            chain.pointee = credentials.chain
            chainLength.pointee = credentials.count
            key.pointee = credentials.key
            return 0
        }
    }
}
