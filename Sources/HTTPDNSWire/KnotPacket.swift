import CKnot

#if canImport(Glibc)
    import Glibc
#endif

/// A `knot_pkt_t`, freed when dropped (`knot_pkt_free`). Its wire is its own buffer, or memory
/// the caller lends it (`init(writingInto:)`, `init(parsingInPlace:)`), which must outlive it:
/// such a packet is made and dropped inside the caller's `withUnsafe...` scope. Thread-confined.
struct KnotPacket: ~Copyable {
    let pointer: UnsafeMutablePointer<knot_pkt_t>

    /// An empty packet (a zeroed header) of at most `capacity` bytes (`knot_pkt_new`).
    init(capacity: Int) throws(DNSMessageError) {
        guard (Int(KNOT_WIRE_HEADER_SIZE.rawValue)...Int(KNOT_WIRE_MAX_PKTSIZE.rawValue)).contains(capacity) else {
            throw DNSMessageError(.library, "a packet of \(capacity) bytes is beyond a DNS message's size")
        }
        pointer = try Knot.require(knot_pkt_new(nil, UInt16(capacity), nil), "knot_pkt_new")
    }

    /// An empty packet (a zeroed header) written into `buffer`, at most `buffer.count` bytes (up
    /// to a DNS message's maximum): `knot_pkt_new` over the caller's memory, then
    /// `knot_pkt_clear`. Nothing of what `buffer` held before is read or kept. `memory`: where
    /// libknot's own allocations for it come from (`KnotArena.with`).
    init(writingInto buffer: UnsafeMutableRawBufferPointer, memory: UnsafeMutablePointer<knot_mm_t>) throws(DNSMessageError) {
        guard let base = buffer.baseAddress, buffer.count >= Int(KNOT_WIRE_HEADER_SIZE.rawValue) else {
            throw DNSMessageError(.library, "a buffer of \(buffer.count) bytes cannot hold a DNS header")
        }
        let capacity = UInt16(min(buffer.count, Int(KNOT_WIRE_MAX_PKTSIZE.rawValue)))
        pointer = try Knot.require(knot_pkt_new(base, capacity, memory), "knot_pkt_new")
        knot_pkt_clear(pointer)
    }

    /// A packet holding a copy of `bytes`, parsed (`knot_pkt_parse`): question, sections, EDNS.
    init(parsing bytes: [UInt8]) throws(DNSMessageError) {
        try Self.checkMessageSize(bytes.count)
        let packet = try Knot.require(
            bytes.withUnsafeBufferPointer { chttpdns_knot_pkt_copying($0.baseAddress, $0.count, $0.count) },
            "knot_pkt_new")
        try Self.parse(packet)
        pointer = packet
    }

    /// The message in `wire`, parsed where it lies (`knot_pkt_new` over it, `knot_pkt_parse`),
    /// which may change it (a TSIG record is cut off). `memory`: as for `init(writingInto:memory:)`.
    init(parsingInPlace wire: UnsafeMutableRawBufferPointer, memory: UnsafeMutablePointer<knot_mm_t>) throws(DNSMessageError) {
        try Self.checkMessageSize(wire.count)
        let packet = try Knot.require(knot_pkt_new(wire.baseAddress, UInt16(wire.count), memory), "knot_pkt_new")
        try Self.parse(packet)
        pointer = packet
    }

    private static func checkMessageSize(_ count: Int) throws(DNSMessageError) {
        guard count >= Int(KNOT_WIRE_HEADER_SIZE.rawValue) else {
            throw DNSMessageError(.malformed, "\(count) bytes are shorter than a DNS header (12)")
        }
        guard count <= Int(KNOT_WIRE_MAX_PKTSIZE.rawValue) else {
            throw DNSMessageError(.malformed, "\(count) bytes are longer than a DNS message may be (65535)")
        }
    }

    /// `knot_pkt_parse`; the packet is freed when it fails.
    private static func parse(_ packet: UnsafeMutablePointer<knot_pkt_t>) throws(DNSMessageError) {
        do {
            try Knot.check(knot_pkt_parse(packet, 0), "knot_pkt_parse", malformed: true)
        } catch {
            knot_pkt_free(packet)
            throw error
        }
    }

    deinit {
        knot_pkt_free(pointer)
    }

    var wire: UnsafeMutablePointer<UInt8> { pointer.pointee.wire }

    /// The size of the message as written so far.
    var size: Int { pointer.pointee.size }

    /// The message as written so far.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: pointer.pointee.wire, count: pointer.pointee.size)) }

    var id: UInt16 { knot_wire_get_id(wire) }
    var isReply: Bool { knot_wire_get_qr(wire) != 0 }
    var opcode: UInt8 { knot_wire_get_opcode(wire) }
    var questionCount: UInt16 { knot_wire_get_qdcount(wire) }
    /// The RCODE with the EDNS extension (`knot_pkt_ext_rcode`).
    var rcode: UInt16 { knot_pkt_ext_rcode(pointer) }

    /// The records of `section`, one RRset at a time.
    func rrsets(_ section: knot_section_t) -> [UnsafePointer<knot_rrset_t>] {
        (0..<chttpdns_knot_section_count(pointer, section)).map { chttpdns_knot_section_rr(pointer, section, $0) }
    }
}

@available(*, unavailable) extension KnotPacket: Sendable {}

/// The memory libknot's allocations for short-lived packets come from (`knot_mm_t`): a region.
/// Each thread has a block of `blockSize` bytes, handed out from its start; a request that does
/// not fit gets a chunk of its own from `malloc`, linked to the block. Nothing is given back one
/// by one: the context has no `free` (libknot's `mm_free` then does nothing), and when the
/// outermost `with` returns, everything taken in it is taken back at once (the chunks `free`d).
/// Before, libknot called a `free` for each of its allocations, which had to look up the
/// thread's block (`pthread_getspecific`) to tell block memory from `malloc`'s: about 600
/// instructions of an RFC 8484 hit (callgrind). What libknot reallocates stays taken until the
/// scope ends: an RRset's records are added one by one, each a new allocation of the whole set,
/// so writing n records takes about n²/2 times a record's size (for the 64 AAAA records an
/// answer holds at most, `DNSReplyParser.maximumAddresses`, some 37 KB, mostly in chunks).
/// Nothing in the block is read before libknot writes it (`knot_pkt_new` clears the packet it
/// takes).
enum KnotArena {
    static let blockSize = 8192

    /// Gives `body` the memory context; everything `body` took is taken back when it returns, so
    /// every packet made over it must be dropped inside `body`. Scopes nest.
    static func with<R>(_ body: (UnsafeMutablePointer<knot_mm_t>) throws(DNSMessageError) -> R) throws(DNSMessageError) -> R {
        let block = threadBlock()
        let mark = block.load(as: Header.self)
        defer {
            var chunk = block.load(as: Header.self).chunks
            while let current = chunk, current != mark.chunks {
                chunk = current.load(as: UnsafeMutableRawPointer?.self)
                free(current)
            }
            block.storeBytes(of: mark, as: Header.self)
        }
        var memory = knot_mm_t(ctx: block, alloc: allocate, free: nil)
        return try body(&memory)
    }

    /// The chunks from `malloc` the calling thread's block holds now (for tests).
    static var chunkCount: Int {
        var count = 0
        var chunk = threadBlock().load(as: Header.self).chunks
        while let current = chunk {
            count += 1
            chunk = current.load(as: UnsafeMutableRawPointer?.self)
        }
        return count
    }

    /// The start of a block: the bytes taken after it, and the newest chunk from `malloc` (each
    /// chunk's first 16 bytes point to the one before it).
    private struct Header {
        var used: Int
        var chunks: UnsafeMutableRawPointer?
    }

    private static let headerSize = 16

    /// This thread's block (`pthread_getspecific`), made on its first use and freed when the
    /// thread ends.
    private static func threadBlock() -> UnsafeMutableRawPointer {
        if let block = pthread_getspecific(key) { return block }
        let block = UnsafeMutableRawPointer.allocate(byteCount: headerSize + blockSize, alignment: 16)
        block.storeBytes(of: Header(used: 0, chunks: nil), as: Header.self)
        precondition(pthread_setspecific(key, block) == 0, "KnotArena: pthread_setspecific failed")
        return block
    }

    private static let key: pthread_key_t = {
        precondition(MemoryLayout<Header>.size <= headerSize)
        var key = pthread_key_t()
        precondition(pthread_key_create(&key) { $0?.deallocate() } == 0, "KnotArena: pthread_key_create failed")
        return key
    }()

    /// `knot_mm_alloc_t`: `len` bytes (rounded up to 16) from the block `context`, else a chunk of
    /// their own (NULL when `malloc` fails: libknot reports that as its out-of-memory error).
    private static let allocate: knot_mm_alloc_t = { context, len in
        guard let block = context else { return nil }
        var header = block.load(as: Header.self)
        let size = (len + 15) & ~15
        if size >= len, size <= blockSize - header.used {
            block.storeBytes(of: Header(used: header.used + size, chunks: header.chunks), as: Header.self)
            return block + headerSize + header.used
        }
        guard len <= Int.max - headerSize, let chunk = malloc(headerSize + len) else { return nil }
        chunk.storeBytes(of: header.chunks, as: UnsafeMutableRawPointer?.self)
        header.chunks = chunk
        block.storeBytes(of: header, as: Header.self)
        return chunk + headerSize
    }
}
