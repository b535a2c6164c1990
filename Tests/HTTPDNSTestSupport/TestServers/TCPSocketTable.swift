import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The IPv4 TCP sockets of this network namespace, as `/proc/net/tcp` lists them.
///
/// Lets a test observe connections in flight (SYNs sent to a black hole, connections a silent
/// server never answers) as events, instead of inferring them from how long something took: a
/// bound on elapsed time fails on a loaded machine, a count of sockets does not.
public enum TCPSocketTable {
    /// A socket's TCP state (the kernel's `TCP_*` numbers).
    public enum State: Sendable, Equatable {
        case established
        case synSent
        case listening
        case other(Int)

        init(code: Int) {
            switch code {
            case 1: self = .established
            case 2: self = .synSent
            case 10: self = .listening
            default: self = .other(code)
            }
        }

        /// Connecting or connected: a socket of a transfer still running, not one an earlier
        /// test left closing (TIME_WAIT and the like, whose remote port a new listener may have
        /// been given).
        public var isOpen: Bool { self == .established || self == .synSent }
    }

    /// One row: local and remote address, state, and the socket's inode, which names one socket
    /// for its whole life (a port does not: another socket may bind it once it is free).
    public struct Entry: Sendable, Equatable {
        public var localHost: String
        public var localPort: UInt16
        public var remoteHost: String
        public var remotePort: UInt16
        public var state: State
        public var inode: UInt64
    }

    /// Every IPv4 TCP socket of the namespace right now (empty when the file cannot be read).
    public static func ipv4() -> [Entry] {
        guard let text = readProcFile("/proc/net/tcp") else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap(parse)
    }

    /// The client side of every connection to `port` (any remote host), in any state.
    public static func connections(toPort port: UInt16) -> [Entry] {
        ipv4().filter { $0.remotePort == port }
    }

    /// Polls the table every 10 ms until `condition` holds for one snapshot (`Poll.until`); true
    /// when it held. A test asserts on what the snapshot shows, never on how long the wait took.
    public static func wait(limit: Double = 30, minimumLooks: Int = 200, until condition: ([Entry]) -> Bool) async -> Bool {
        await Poll.until(limit: limit, minimumLooks: minimumLooks, every: .milliseconds(10)) { condition(ipv4()) }
    }

    /// The inodes of the sockets listening on `port` now (any local address), for
    /// `anyListens(_:)` once the listener is stopped. A stopped listener is asked after by its
    /// sockets, never by connecting to its port: once free, the port may be given at once to a
    /// server another test starts, which would accept the connect.
    public static func listeningSockets(onPort port: UInt16) -> Set<UInt64> {
        Set(ipv4().filter { $0.localPort == port && $0.state == .listening }.map(\.inode))
    }

    /// Whether any of `sockets` (inodes of `listeningSockets(onPort:)`) still listens.
    public static func anyListens(_ sockets: Set<UInt64>) -> Bool {
        ipv4().contains { $0.state == .listening && sockets.contains($0.inode) }
    }

    /// `  0: 0100007F:1F90 0100007F:A2C4 01 txq:rxq tr:when retrnsmt uid timeout inode ...`
    private static func parse(_ line: Substring) -> Entry? {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 9, let local = endpoint(fields[1]), let remote = endpoint(fields[2]),
            let state = Int(fields[3], radix: 16), let inode = UInt64(fields[9])
        else { return nil }
        return Entry(
            localHost: local.host, localPort: local.port, remoteHost: remote.host, remotePort: remote.port, state: State(code: state),
            inode: inode)
    }

    /// `0100007F:1F90`: the address is the `__be32` printed as a host-order integer, the port is
    /// in host order.
    private static func endpoint(_ field: Substring) -> (host: String, port: UInt16)? {
        let parts = field.split(separator: ":")
        guard parts.count == 2, let raw = UInt32(parts[0], radix: 16), let port = UInt16(parts[1], radix: 16) else { return nil }
        let octets = withUnsafeBytes(of: raw) { Array($0) }
        return (octets.map(String.init).joined(separator: "."), port)
    }

    /// Reads a whole `/proc` file (its reported size is 0, so read until end of file).
    private static func readProcFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
