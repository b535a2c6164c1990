import Foundation
import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSConfig

/// docs/configuration.md is the reference of every setting: its tables hold exactly the keys,
/// environment variables and flags the parser accepts (`ServiceConfig.settings`,
/// `ServiceConfig.defaultAccountSettings`, `AccountConfig.keys`), so none can be missing from
/// it and it names none the parser would refuse.
@Suite("Configuration reference")
struct ConfigurationReferenceTests {
    static let page = TestPaths.packageRoot.appendingPathComponent("docs/configuration.md")

    @Test func theServiceKeysTableHoldsEverySettingWithItsVariableAndFlag() throws {
        let rows = try ConfigurationTables(Self.page).table(headedBy: ["key", "env", "flag", "default", "meaning"])
        var expected = Set(ServiceConfig.settings.map { [$0.key, $0.env, $0.flag] })
        expected.insert(["—", "HTTPDNS_CONFIG", "--config FILE"])
        expected.insert(["accounts", "—", "—"])
        let documented = Set(rows.map { Array($0.prefix(3)) })
        #expect(documented.count == rows.count, "a key is listed twice")
        #expect(expected.subtracting(documented).isEmpty, "accepted by the parser, missing from docs/configuration.md")
        #expect(
            documented.subtracting(expected).isEmpty, "in docs/configuration.md, not accepted by the parser (or another variable or flag)")
    }

    @Test func theDefaultAccountTableHoldsTheSettingsWithAVariableOfTheirOwn() throws {
        let rows = try ConfigurationTables(Self.page).table(headedBy: ["account key", "env", "flag", "value"])
        let expected = Set(ServiceConfig.defaultAccountSettings.map { [$0.key, $0.env, $0.flag] })
        let documented = Set(rows.map { Array($0.prefix(3)) })
        #expect(documented == expected)
    }

    @Test func theAccountKeysTableHoldsEveryAccountKey() throws {
        let rows = try ConfigurationTables(Self.page).table(headedBy: ["key", "default", "meaning"])
        let documented = rows.map { $0[0] }
        #expect(Set(documented).count == documented.count, "an account key is listed twice")
        #expect(AccountConfig.keys.subtracting(documented).isEmpty, "accepted by the parser, missing from docs/configuration.md")
        #expect(Set(documented).subtracting(AccountConfig.keys).isEmpty, "in docs/configuration.md, not accepted by the parser")
    }

    /// Each default the service table shows as a value (the first `code` of its default cell),
    /// set through the parser, leaves a new configuration unchanged: it is the code's default.
    @Test func theServiceKeysTableShowsTheDefaultsTheServiceHas() throws {
        let rows = try ConfigurationTables(Self.page)
            .table(headedBy: ["key", "env", "flag", "default", "meaning"], keepingCode: true)
        var compared = 0
        for row in rows {
            let key = row[0].replacingOccurrences(of: "`", with: "")
            guard let setting = ServiceConfig.settings.first(where: { $0.key == key }), row[3].hasPrefix("`"),
                let shown = row[3].split(separator: "`").first.map(String.init)
            else { continue }
            var config = ServiceConfig()
            try setting.apply(&config, shown, key)
            #expect(config == ServiceConfig(), "default of \(key) in docs/configuration.md: \(shown)")
            compared += 1
        }
        #expect(compared >= 20, "defaults compared: \(compared)")
    }

    /// Each default the account table shows as a value (the first `code` of its default cell) is
    /// the one a new account has; defaults given in words ("none", "the service's") are not values.
    @Test func theAccountKeysTableShowsTheDefaultsAnAccountHas() throws {
        let rows = try ConfigurationTables(Self.page).table(headedBy: ["key", "default", "meaning"], keepingCode: true)
        let defaults = AccountConfig().jsonObject(redacted: true)
        var compared = 0
        for row in rows {
            let key = row[0].replacingOccurrences(of: "`", with: "")
            guard row[1].hasPrefix("`"), let shown = row[1].split(separator: "`").first.map(String.init) else { continue }
            let value = try #require(defaults[key], "\(key) has a default value in the table but none in AccountConfig")
            let text: String
            if let string = value as? String {
                text = string
            } else {
                let data = try JSONSerialization.data(
                    withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
                text = String(decoding: data, as: UTF8.self)
            }
            #expect(shown == text, "default of \(key) in docs/configuration.md")
            compared += 1
        }
        #expect(compared >= 25, "defaults compared: \(compared)")
    }

    /// The example the reference points to loads, and keeps the connection buffer the code
    /// defaults to (a copy of an older default would be taken for advice).
    @Test func theExampleFileLoadsAndKeepsTheDefaultConnectionBuffer() throws {
        let url = TestPaths.packageRoot.appendingPathComponent("deploy/httpdnsd.example.json")
        let data = try Data(contentsOf: url)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let config = try ServiceConfig(json: object)
        #expect(config.connectionMemoryLimit == ServiceConfig().connectionMemoryLimit)
        #expect(Set(config.accounts.keys) == ["default", "shop"])
    }

    @Test func aTableRowIsReadCellByCellWithEscapedBars() throws {
        let text = """
            | key | default | meaning |
            |---|---|---|
            | `query` | `4\\|6` | a `\\|` inside |
            | `b` | none | x |

            | other | table |
            |---|---|
            | `c` | d |
            """
        let tables = ConfigurationTables(text: text)
        #expect(tables.table(headedBy: ["key", "default", "meaning"]) == [["query", "4|6", "a | inside"], ["b", "none", "x"]])
        #expect(tables.table(headedBy: ["other", "table"]) == [["c", "d"]])
    }
}

/// The Markdown tables of a page: cells trimmed, `\|` read as `|`.
struct ConfigurationTables {
    private var tables: [(header: [String], rows: [[String]])] = []

    init(_ url: URL) throws {
        self.init(text: try String(contentsOf: url, encoding: .utf8))
    }

    init(text: String) {
        var current: (header: [String], rows: [[String]])?
        for line in text.components(separatedBy: "\n") {
            guard line.hasPrefix("|") else {
                if let table = current { tables.append(table) }
                current = nil
                continue
            }
            let cells = Self.cells(line)
            if current == nil {
                current = (cells, [])
            } else if !cells.allSatisfy({ $0.allSatisfy { $0 == "-" || $0 == ":" } }) {
                current!.rows.append(cells)
            }
        }
        if let table = current { tables.append(table) }
    }

    /// The rows of the one table with this header (empty when there is none); `keepingCode`
    /// keeps the backticks of the cells (the header is matched without them).
    func table(headedBy header: [String], keepingCode: Bool = false) -> [[String]] {
        let rows = tables.first { $0.header.map(Self.withoutCode) == header }?.rows ?? []
        return keepingCode ? rows : rows.map { $0.map(Self.withoutCode) }
    }

    private static func withoutCode(_ cell: String) -> String {
        cell.replacingOccurrences(of: "`", with: "")
    }

    private static func cells(_ line: String) -> [String] {
        var cells: [String] = []
        var cell = ""
        var escaped = false
        for character in line.dropFirst() {
            if escaped {
                cell.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "|" {
                cells.append(cell)
                cell = ""
            } else {
                cell.append(character)
            }
        }
        return cells.map { $0.trimmingCharacters(in: .whitespaces) }
    }
}
