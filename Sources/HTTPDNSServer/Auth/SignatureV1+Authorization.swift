extension SignatureV1 {
    /// What follows the scheme of an `Authorization: HTTPDNS-HMAC-SHA256 kid=...,t=...,sign=...`
    /// header (empty for the scheme alone); nil for a header of another scheme. The scheme's name
    /// is case-insensitive and ends at one space. Read as bytes; a header whose byte after that
    /// space is not ASCII is compared as text (a combining mark after the space makes the space
    /// another character, and the scheme is then not there).
    static func authorizationParameters(_ authorization: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let name = scheme.utf8.count
        guard authorization.count >= name, isScheme(UnsafeRawBufferPointer(rebasing: authorization[..<name])) else { return nil }
        if authorization.count == name { return UnsafeRawBufferPointer(rebasing: authorization[name...]) }
        guard authorization.count > name + 1, authorization[name] == UInt8(ascii: " ") else { return nil }
        if authorization[name + 1] >= 0x80 {
            let prefix = String(decoding: authorization, as: UTF8.self).prefix(name + 1)
            guard prefix.lowercased() == scheme.lowercased() + " " else { return nil }
        }
        return UnsafeRawBufferPointer(rebasing: authorization[(name + 1)...])
    }

    /// Whether `bytes` spell the scheme's name, ASCII letters in any case.
    private static func isScheme(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var scheme = scheme
        return scheme.withUTF8 { expected in
            zip(bytes, expected).allSatisfy { asciiLowercased($0) == asciiLowercased($1) }
        }
    }

    /// Reads the fields of the header's parameters into `kid`, `t` and `sign`: `name=value`
    /// separated by commas (empty ones skipped), spaces and tabs around each ignored, names in
    /// any case; each value runs to the end of its field. Nil when they are well formed, else
    /// what is wrong.
    static func readAuthorizationFields(
        _ parameters: UnsafeRawBufferPointer, kid: inout UnsafeRawBufferPointer?, t: inout UnsafeRawBufferPointer?,
        sign: inout UnsafeRawBufferPointer?
    ) -> String? {
        var start = 0
        while start < parameters.count {
            let end = parameters[start...].firstIndex(of: UInt8(ascii: ",")) ?? parameters.count
            defer { start = end + 1 }
            guard end > start else { continue }
            let field = trimmingSpaces(UnsafeRawBufferPointer(rebasing: parameters[start..<end]))
            guard let equals = field.firstIndex(of: UInt8(ascii: "=")) else {
                return "Authorization field '\(String(decoding: field, as: UTF8.self).prefix(16))' is not name=value"
            }
            let name = UnsafeRawBufferPointer(rebasing: field[..<equals])
            let value = UnsafeRawBufferPointer(rebasing: field[(equals + 1)...])
            let slot: Int
            if let known = fieldSlot(name) {
                slot = known
            } else {
                // Names compare as text in any case (Unicode's lower case, as they always have).
                let lowered = String(decoding: name, as: UTF8.self).lowercased()
                var loweredBytes = lowered
                guard let known = loweredBytes.withUTF8({ fieldSlot(UnsafeRawBufferPointer($0)) }) else {
                    return "unknown Authorization field '\(lowered.prefix(16))'"
                }
                slot = known
            }
            switch slot {
            case 0:
                guard kid == nil else { return "Authorization field 'kid' given twice" }
                kid = value
            case 1:
                guard t == nil else { return "Authorization field 't' given twice" }
                t = value
            default:
                guard sign == nil else { return "Authorization field 'sign' given twice" }
                sign = value
            }
        }
        return nil
    }

    /// 0 for `kid`, 1 for `t`, 2 for `sign` (ASCII letters in any case), else nil.
    private static func fieldSlot(_ name: UnsafeRawBufferPointer) -> Int? {
        func spells(_ word: StaticString) -> Bool {
            name.count == word.utf8CodeUnitCount
                && zip(name, UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)).allSatisfy {
                    asciiLowercased($0) == $1
                }
        }
        if spells("kid") { return 0 }
        if spells("t") { return 1 }
        if spells("sign") { return 2 }
        return nil
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// `bytes` without the spaces and tabs at either end.
    private static func trimmingSpaces(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var start = 0, end = bytes.count
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }
}
