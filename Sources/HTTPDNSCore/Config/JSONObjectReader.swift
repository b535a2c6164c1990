import Foundation

/// Reads typed values out of a decoded JSON object and names the key in every error, so a bad
/// configuration is reported as `accounts.shop.timeout: must be a number of seconds > 0`.
package struct JSONObjectReader {
    let object: [String: Any]
    let path: String

    package init(_ object: [String: Any], path: String) {
        self.object = object
        self.path = path
    }

    func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Fails on the first key not in `known`, and on a key whose value is `null`: a key is
    /// either given a value or left out (its default), never set to nothing.
    package func checkKeys(_ known: Set<String>) throws(ConfigError) {
        for key in object.keys.sorted() where !known.contains(key) {
            throw ConfigError(key: keyPath(key), "unknown key (known keys: \(known.sorted().joined(separator: ", ")))")
        }
        for key in object.keys.sorted() where object[key] is NSNull {
            throw ConfigError(key: keyPath(key), "is null: give a value, or leave the key out for its default")
        }
    }

    func bool(_ key: String) throws(ConfigError) -> Bool? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        if let number = value as? NSNumber, isBoolean(number) {
            return number.boolValue
        }
        throw ConfigError(key: keyPath(key), "must be true or false")
    }

    func string(_ key: String) throws(ConfigError) -> String? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw ConfigError(key: keyPath(key), "must be a string") }
        return text
    }

    func double(_ key: String, range: ClosedRange<Double>) throws(ConfigError) -> Double? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let number = value as? NSNumber, !isBoolean(number) else {
            throw ConfigError(key: keyPath(key), "must be a number between \(range.lowerBound) and \(range.upperBound)")
        }
        let double = number.doubleValue
        guard range.contains(double) else {
            throw ConfigError(key: keyPath(key), "must be between \(range.lowerBound) and \(range.upperBound), got \(double)")
        }
        return double
    }

    func int(_ key: String, range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let number = value as? NSNumber, !isBoolean(number), number.doubleValue == number.doubleValue.rounded(),
            let int = Int(exactly: number.doubleValue)
        else {
            throw ConfigError(key: keyPath(key), "must be a whole number between \(range.lowerBound) and \(range.upperBound)")
        }
        guard range.contains(int) else {
            throw ConfigError(key: keyPath(key), "must be between \(range.lowerBound) and \(range.upperBound), got \(int)")
        }
        return int
    }

    func strings(_ key: String) throws(ConfigError) -> [String]? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let array = value as? [Any] else { throw ConfigError(key: keyPath(key), "must be an array of strings") }
        var result: [String] = []
        for (index, element) in array.enumerated() {
            guard let text = element as? String else {
                throw ConfigError(key: "\(keyPath(key))[\(index)]", "must be a string")
            }
            result.append(text)
        }
        return result
    }

    package func object(_ key: String) throws(ConfigError) -> [String: Any]? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let nested = value as? [String: Any] else { throw ConfigError(key: keyPath(key), "must be a JSON object") }
        return nested
    }

    /// JSONSerialization decodes `true`/`false` as NSNumber whose ObjC type is "c" (char).
    private func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }
}

/// Parses JSON text into an object. Invalid JSON names `key` (the file, or `body`) with the
/// line and column of the fault; a key given twice in one object is refused, named by its path
/// (`JSONTextCheck`); so is text that is not a JSON object.
public func parseJSONObject(_ data: Data, key: String) throws(ConfigError) -> [String: Any] {
    if let problem = JSONTextCheck.problem(in: Array(data)) {
        if let duplicate = problem.key {
            throw ConfigError(key: duplicate, "\(problem.message) (\(key), line \(problem.line), column \(problem.column))")
        }
        throw ConfigError(key: key, "is not valid JSON: line \(problem.line), column \(problem.column): \(problem.message)")
    }
    let value: Any
    do {
        value = try JSONSerialization.jsonObject(with: data, options: [])
    } catch {
        throw ConfigError(key: key, "is not valid JSON (\(error.localizedDescription))")
    }
    guard let object = value as? [String: Any] else { throw ConfigError(key: key, "must be a JSON object") }
    return object
}
