#if canImport(Glibc)
    import Glibc
#endif

/// The non-empty `/`-separated segments of a path's bytes, as offsets into them: no string, no
/// array (every request is matched). Paths with more than `capacity` segments report `count` as
/// `capacity + 1`.
struct PathSegments {
    static let capacity = 4
    private(set) var count = 0
    /// The path is written the one way its segments are: `/` before each segment and nowhere
    /// else (no `//`, no trailing `/`; `/` alone for no segment).
    private(set) var isCanonical = false
    private var ranges: (Range<Int>, Range<Int>, Range<Int>, Range<Int>) = (0..<0, 0..<0, 0..<0, 0..<0)

    init(_ path: UnsafeRawBufferPointer) {
        guard !path.isEmpty else { return }
        var canonical = path[0] == UInt8(ascii: "/")
        var start = -1  // where the segment being read began, -1 between segments
        for index in 0..<path.count {
            if path[index] != UInt8(ascii: "/") {
                if start < 0 { start = index }
            } else if start >= 0 {
                append(start..<index)
                start = -1
            } else if index > 0 {
                canonical = false  // `//`, or a path that begins with it
            }
        }
        if start >= 0 {
            append(start..<path.count)
        } else if path.count > 1 {
            canonical = false  // a trailing `/`
        }
        isCanonical = canonical
    }

    private mutating func append(_ range: Range<Int>) {
        switch count {
        case 0: ranges.0 = range
        case 1: ranges.1 = range
        case 2: ranges.2 = range
        case 3: ranges.3 = range
        default: break
        }
        count = min(count + 1, Self.capacity + 1)
    }

    /// The offsets of the `index`th segment in the path.
    subscript(index: Int) -> Range<Int> {
        switch index {
        case 0: ranges.0
        case 1: ranges.1
        case 2: ranges.2
        default: ranges.3
        }
    }

    /// The `index`th segment's bytes in `path`, the bytes these segments were read from.
    func bytes(_ index: Int, of path: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: path[self[index]])
    }

    /// The `index`th segment's text in `path`, the text these segments were read from.
    func text(_ index: Int, of path: String) -> String {
        let utf8 = path.utf8
        let range = self[index]
        let start = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
        return String(path[start..<utf8.index(start, offsetBy: range.count)])
    }
}

/// Where a path led in the route table: the rows of the one pattern it fits (in table order),
/// and its segments.
struct PathMatch {
    /// Valid as long as the route table (the table is built once, for the program's life).
    let rows: UnsafeBufferPointer<Route>
    let segments: PathSegments
}

/// The route table's one matcher, built once from its rows: finds the pattern a path fits,
/// reading the path's bytes, allocating nothing and retaining nothing. The general path (an
/// `HTTPRequest`'s path) and the cached hit (the borrowed request head) both find their route
/// here. Where several patterns fit, the one with the most literal segments wins, and among
/// those the first in the table: `/v1/accounts/x` is the admin API, never the tenant API of an
/// account named `accounts`.
final class RouteMatcher: @unchecked Sendable {
    /// A segment's literal: its place in `literals`; `count` -1 for `{account}` or `{id}`, which
    /// fit any segment.
    private struct Literal {
        var start = 0
        var count = -1
    }

    /// One pattern: its segment count and its segments' literals.
    private struct Pattern {
        var segmentCount = 0
        var literals = (Literal(), Literal(), Literal(), Literal())
        /// The pattern's rows in `rows`.
        var rows: Range<Int> = 0..<0

        func literal(_ index: Int) -> Literal {
            switch index {
            case 0: literals.0
            case 1: literals.1
            case 2: literals.2
            default: literals.3
            }
        }

        mutating func setLiteral(_ index: Int, _ range: Literal) {
            switch index {
            case 0: literals.0 = range
            case 1: literals.1 = range
            case 2: literals.2 = range
            default: literals.3 = range
            }
        }
    }

    /// Every row, grouped by pattern (table order within a group); written in `init` and never
    /// changed (hence `@unchecked Sendable`).
    private let rows: UnsafeMutableBufferPointer<Route>
    /// The patterns by segment count, most literal segments first (table order among equals):
    /// the first that fits wins.
    private let patterns: UnsafeMutableBufferPointer<Pattern>
    /// The patterns of each segment count, 0 to `PathSegments.capacity`, in `patterns`.
    private let bySegmentCount: UnsafeMutableBufferPointer<Range<Int>>
    /// The literal segments' bytes, one after the other.
    private let literals: UnsafeMutableRawBufferPointer

    init(_ routes: [Route]) {
        var groups: [[Route]] = []
        for route in routes {
            if let index = groups.firstIndex(where: { $0[0].pattern == route.pattern }) {
                groups[index].append(route)
            } else {
                groups.append([route])
            }
        }
        // A stable sort: the table's order decides among patterns with as many literals.
        groups = groups.enumerated().sorted { lhs, rhs in
            let (left, right) = (lhs.element[0], rhs.element[0])
            if left.pattern.count != right.pattern.count { return left.pattern.count < right.pattern.count }
            return left.literalCount != right.literalCount ? left.literalCount > right.literalCount : lhs.offset < rhs.offset
        }.map(\.element)
        var text: [UInt8] = []
        var built: [Pattern] = []
        var ordered: [Route] = []
        for group in groups {
            precondition(group[0].pattern.count <= PathSegments.capacity, "a route pattern has more than \(PathSegments.capacity) segments")
            var pattern = Pattern(segmentCount: group[0].pattern.count, rows: ordered.count..<(ordered.count + group.count))
            for (index, segment) in group[0].pattern.enumerated() {
                guard case .literal(let literal) = segment else { continue }
                pattern.setLiteral(index, Literal(start: text.count, count: literal.utf8.count))
                text.append(contentsOf: literal.utf8)
            }
            built.append(pattern)
            ordered.append(contentsOf: group)
        }
        rows = .allocate(capacity: ordered.count)
        _ = rows.initialize(from: ordered)
        patterns = .allocate(capacity: built.count)
        _ = patterns.initialize(from: built)
        literals = .allocate(byteCount: max(text.count, 1), alignment: 1)
        literals.copyBytes(from: text)
        bySegmentCount = .allocate(capacity: PathSegments.capacity + 1)
        for count in 0...PathSegments.capacity {
            let first = built.firstIndex { $0.segmentCount == count } ?? 0
            let end = built.lastIndex { $0.segmentCount == count }.map { $0 + 1 } ?? first
            bySegmentCount.initializeElement(at: count, to: first..<end)
        }
    }

    deinit {
        rows.deinitialize()
        rows.deallocate()
        patterns.deinitialize()
        patterns.deallocate()
        bySegmentCount.deinitialize()
        bySegmentCount.deallocate()
        literals.deallocate()
    }

    /// The rows of the pattern `path` fits, nil when it fits none.
    func match(_ path: UnsafeRawBufferPointer) -> PathMatch? {
        let segments = PathSegments(path)
        guard segments.count <= PathSegments.capacity else { return nil }
        for index in bySegmentCount[segments.count] where fits(patterns.baseAddress! + index, segments, path) {
            let range = patterns[index].rows
            return PathMatch(rows: UnsafeBufferPointer(rebasing: rows[range]), segments: segments)
        }
        return nil
    }

    /// Whether the literal segments of `pattern` (of as many segments as the path) are the path's.
    private func fits(_ pattern: UnsafePointer<Pattern>, _ segments: PathSegments, _ path: UnsafeRawBufferPointer) -> Bool {
        for index in 0..<segments.count {
            let literal = pattern.pointee.literal(index)
            guard literal.count >= 0 else { continue }
            let segment = segments[index]
            guard segment.count == literal.count else { return false }
            // Segments are short: a byte loop costs less than a call to `memcmp`.
            for offset in 0..<literal.count where path[segment.lowerBound + offset] != literals[literal.start + offset] {
                return false
            }
        }
        return true
    }
}

extension Route {
    /// How many of the pattern's segments are literal text.
    var literalCount: Int {
        pattern.count { if case .literal = $0 { true } else { false } }
    }
}
