/// A logged lookup as the queue keeps it: a fixed header of plain numbers followed by its
/// texts' bytes, appended to one byte buffer (`QueryLogBuffer`). A request thread copies bytes
/// only (no allocation, no reference counting); the writer decodes the records into
/// `QueryLogEntry` values, masking the client's address there.
public struct QueryLogRecord: Sendable {
    /// The numbers of a record, copied as bytes.
    struct Header: Sendable {
        var time: Double
        var expires: Double
        var durationMicroseconds: Int
        var status: Int
        /// 0 without a client address, else `RecordFamily.rawValue` of its family.
        var clientFamily: UInt8
        var clientPrefixV4: UInt8
        var clientPrefixV6: UInt8
        var clientHigh: UInt64
        var clientLow: UInt64
        var accountCount: UInt16
        var hostCount: UInt16
        var typeCount: UInt16
        var formatCount: UInt16
        var sourceCount: UInt16
        var rcodeCount: UInt16
        var requestIDCount: UInt16
    }

    var header: Header

    /// A record's numbers; its texts are given to `QueryLogQueue.offer` beside it.
    public init(
        time: Double, expires: Double, durationMicroseconds: Int, status: Int, client: IPAddress?, clientPrefixV4: Int,
        clientPrefixV6: Int
    ) {
        var high: UInt64 = 0, low: UInt64 = 0
        if let client {
            client.withUnsafeBytes { bytes in
                withUnsafeMutableBytes(of: &high) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(8))) }
                if bytes.count > 8 {
                    withUnsafeMutableBytes(of: &low) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.dropFirst(8))) }
                }
            }
        }
        header = Header(
            time: time, expires: expires, durationMicroseconds: durationMicroseconds, status: status,
            clientFamily: client.map { $0.family == .a ? 4 : 6 } ?? 0, clientPrefixV4: UInt8(clientPrefixV4),
            clientPrefixV6: UInt8(clientPrefixV6), clientHigh: high, clientLow: low, accountCount: 0, hostCount: 0, typeCount: 0,
            formatCount: 0, sourceCount: 0, rcodeCount: 0, requestIDCount: 0)
    }

    /// The longest text a record keeps (longer ones are cut).
    static let maximumText = 1024

    /// The texts of a record besides its name (`append`'s `host`).
    public struct Texts: Sendable {
        public var account: String
        public var type: String
        public var format: String
        public var source: String
        public var rcode: String
        public var requestID: String

        public init(account: String, type: String, format: String, source: String, rcode: String, requestID: String) {
            self.account = account
            self.type = type
            self.format = format
            self.source = source
            self.rcode = rcode
            self.requestID = requestID
        }
    }

    /// Writes the record with its texts (each cut at `maximumText` bytes) at `target`, unless
    /// it needs more than `available` bytes; returns the bytes written, nil when it does not fit.
    /// Copies bytes only: nothing is allocated or reference counted.
    static func write(
        _ record: QueryLogRecord, host: UnsafeRawBufferPointer, texts: Texts, to target: UnsafeMutableRawPointer, available: Int
    ) -> Int? {
        let host = host.count <= maximumText ? host : UnsafeRawBufferPointer(rebasing: host.prefix(maximumText))
        var header = record.header
        header.accountCount = length(texts.account)
        header.hostCount = UInt16(host.count)
        header.typeCount = length(texts.type)
        header.formatCount = length(texts.format)
        header.sourceCount = length(texts.source)
        header.rcodeCount = length(texts.rcode)
        header.requestIDCount = length(texts.requestID)
        let total =
            MemoryLayout<Header>.size + Int(header.accountCount) + host.count + Int(header.typeCount) + Int(header.formatCount)
            + Int(header.sourceCount) + Int(header.rcodeCount) + Int(header.requestIDCount)
        guard total <= available else { return nil }
        target.storeBytes(of: header, as: Header.self)
        var offset = MemoryLayout<Header>.size
        copy(texts.account, Int(header.accountCount), to: target, at: &offset)
        if host.count > 0 { (target + offset).copyMemory(from: host.baseAddress!, byteCount: host.count) }
        offset += host.count
        copy(texts.type, Int(header.typeCount), to: target, at: &offset)
        copy(texts.format, Int(header.formatCount), to: target, at: &offset)
        copy(texts.source, Int(header.sourceCount), to: target, at: &offset)
        copy(texts.rcode, Int(header.rcodeCount), to: target, at: &offset)
        copy(texts.requestID, Int(header.requestIDCount), to: target, at: &offset)
        return total
    }

    /// Copies the first `count` UTF-8 bytes of `text`, read in place, to `target + offset`.
    @inline(__always)
    private static func copy(_ text: String, _ count: Int, to target: UnsafeMutableRawPointer, at offset: inout Int) {
        guard count > 0 else { return }
        var text = text
        text.withUTF8 { (target + offset).copyMemory(from: $0.baseAddress!, byteCount: count) }
        offset += count
    }

    private static func length(_ text: String) -> UInt16 { UInt16(min(text.utf8.count, maximumText)) }

    /// The entries `buffer` holds, in order, their clients masked (`QueryLogEntry.completed`).
    static func decode(_ buffer: UnsafeRawBufferPointer) -> [QueryLogEntry] {
        var entries: [QueryLogEntry] = []
        do {
            var offset = 0
            while offset + MemoryLayout<Header>.size <= buffer.count {
                let header = buffer.loadUnaligned(fromByteOffset: offset, as: Header.self)
                offset += MemoryLayout<Header>.size
                func text(_ count: UInt16) -> String {
                    let part = UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + Int(count)])
                    offset += Int(count)
                    return String(decoding: part, as: UTF8.self)
                }
                let account = text(header.accountCount), host = text(header.hostCount), type = text(header.typeCount)
                let format = text(header.formatCount), source = text(header.sourceCount), rcode = text(header.rcodeCount)
                let requestID = text(header.requestIDCount)
                var entry = QueryLogEntry(
                    account: account, time: header.time, host: host, type: type, format: format, client: "", source: source,
                    status: header.status, rcode: rcode, durationMicroseconds: header.durationMicroseconds, requestID: requestID,
                    expires: header.expires)
                entry.clientAddress = client(header)
                entry.clientPrefixV4 = header.clientPrefixV4
                entry.clientPrefixV6 = header.clientPrefixV6
                entries.append(entry.completed())
            }
        }
        return entries
    }

    private static func client(_ header: Header) -> IPAddress? {
        guard header.clientFamily != 0 else { return nil }
        var storage = (header.clientHigh, header.clientLow)
        let family: RecordFamily = header.clientFamily == 4 ? .a : .aaaa
        return withUnsafeBytes(of: &storage) {
            IPAddress(family: family, rawBytes: UnsafeRawBufferPointer(rebasing: $0.prefix(family == .a ? 4 : 16)))
        }
    }
}
