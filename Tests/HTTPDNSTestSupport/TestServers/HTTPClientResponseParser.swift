import Foundation

/// Parses an HTTP/1.1 response from raw bytes.
enum HTTPClientResponseParser {
    /// Returns the response, or throws when it is not complete yet (`complete == false`) or malformed.
    static func parse(_ bytes: [UInt8], complete: Bool) throws -> HTTPClientResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headEnd = bytes.firstRange(of: separator) else {
            throw HarnessError("incomplete or malformed response head (\(bytes.count) bytes)")
        }
        let head = String(decoding: bytes[..<headEnd.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw HarnessError("bad status line in \(head)")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                (
                    line[..<colon].lowercased(),
                    line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                ))
        }
        var rest = Array(bytes[headEnd.upperBound...])
        let field = { (name: String) in headers.first { $0.name == name }?.value }
        if field("transfer-encoding")?.lowercased().contains("chunked") == true {
            rest = try dechunk(rest, complete: complete)
        } else if let lengthText = field("content-length"), let length = Int(lengthText) {
            guard rest.count >= length else {
                throw HarnessError("body shorter than Content-Length (\(rest.count) < \(length))")
            }
            rest = Array(rest[..<length])
        } else if !complete {
            throw HarnessError("body of unknown length: read to EOF")
        }
        return HTTPClientResponse(status: status, headers: headers, body: rest)
    }

    private static func dechunk(_ bytes: [UInt8], complete: Bool) throws -> [UInt8] {
        var body: [UInt8] = []
        var index = 0
        while true {
            guard let lineEnd = bytes[index...].firstRange(of: [13, 10]) else {
                throw HarnessError("incomplete chunk")
            }
            let sizeText =
                String(decoding: bytes[index..<lineEnd.lowerBound], as: UTF8.self)
                .split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw HarnessError("bad chunk size '\(sizeText)'")
            }
            index = lineEnd.upperBound
            if size == 0 { return body }
            guard bytes.count >= index + size + 2 else { throw HarnessError("incomplete chunk") }
            body += bytes[index..<(index + size)]
            index += size + 2
        }
    }
}
