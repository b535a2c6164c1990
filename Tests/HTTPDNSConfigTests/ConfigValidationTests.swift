import Foundation
import HTTPDNSCore
import Testing

@testable import HTTPDNSConfig

/// Every value is checked where it is set (file, environment, flag, admin body), and the error
/// names the key: bad addresses, `null`, a key given twice, JSON that does not parse.
@Suite("Config validation")
struct ConfigValidationTests {
    @Test func localDNSServersThatAreNotAddressesAreNamedInEverySource() throws {
        let file = try #require(
            ConfigLoading.fileError(#"{"accounts": {"shop": {"localDNSServers": ["127.0.0.1:53", "not-an-address"]}}}"#))
        #expect(file.key == "accounts.shop.localDNSServers[1]")
        #expect(file.message.contains("'not-an-address' is not an IP address"))
        let upstreams = "doh:http://127.0.0.1:1/dns-query"
        #expect(
            ConfigLoading().error(env: ["HTTPDNS_UPSTREAMS": upstreams, "HTTPDNS_LOCALDNS_SERVERS": "not-an-address"])?.key
                == "HTTPDNS_LOCALDNS_SERVERS[0]")
        #expect(ConfigLoading().error(["--upstreams", upstreams, "--localdns-servers", "127.0.0.1,x:y"])?.key == "--localdns-servers[1]")
    }

    @Test func nullIsRefusedForServiceAndAccountKeys() {
        #expect(
            ConfigLoading.fileError(#"{"threads": null}"#)
                == ConfigError(key: "threads", "is null: give a value, or leave the key out for its default"))
        #expect(ConfigLoading.fileError(#"{"trustedProxies": null}"#)?.key == "trustedProxies")
        #expect(ConfigLoading.fileError(#"{"accounts": {"shop": {"maxCacheTTL": null}}}"#)?.key == "accounts.shop.maxCacheTTL")
        #expect(
            ConfigLoading.fileError(#"{"accounts": {"shop": {"clientKeys": [{"id": "k", "secret": null, "role": "resolve"}]}}}"#)?.key
                == "accounts.shop.clientKeys[0].secret")
    }

    @Test func aKeyGivenTwiceIsRefusedWithItsPathAndPosition() throws {
        let json = """
            {"listen": "127.0.0.1:1",
             "accounts": {"shop": {"timeout": 1,
                                   "timeout": 2}}}
            """
        let error = try #require(ConfigLoading.fileError(json))
        #expect(error.key == "accounts.shop.timeout")
        #expect(error.message == "is given twice in the same object (/etc/httpdnsd.json, line 3, column 24)")
        #expect(ConfigLoading.fileError(#"{"threads": 1, "threads": 2}"#)?.key == "threads")
        // The same key in two different objects is fine.
        #expect(ConfigLoading.fileError(#"{"accounts": {"a": {"timeout": 1}, "b": {"timeout": 1}}}"#) == nil)
        // Keys are compared decoded: an escape does not hide a repetition.
        #expect(ConfigLoading.fileError(#"{"threads": 1, "thre\u0061ds": 2}"#)?.key == "threads")
    }

    @Test(arguments: [
        ("{\"threads\": 1,\n \"listen\" \"127.0.0.1:1\"}", 2, 11, "expected ':' after the key"),
        ("{\"threads\": 1,}", 1, 15, "expected a key in double quotes"),
        ("{\"threads\": 01}", 1, 14, "expected ',' or '}'"),
        ("{\"threads\": tru}", 1, 13, "expected a JSON value"),
        ("{\"listen\": \"127.0.0.1:1}", 1, 25, "a string is not closed"),
        ("{}\n{}", 2, 1, "unexpected text after the JSON value"),
        ("{\"é\": \"x\" x}", 1, 11, "expected ',' or '}'"),
    ])
    func invalidJSONIsReportedWithLineAndColumn(_ json: String, _ line: Int, _ column: Int, _ message: String) throws {
        let error = try #require(ConfigLoading.fileError(json))
        #expect(error.key == "/etc/httpdnsd.json")
        #expect(error.message.hasPrefix("is not valid JSON: line \(line), column \(column): \(message)"), "\(error)")
    }

    @Test func logAndDrainSettingsComeFromFileEnvironmentAndFlags() throws {
        let file = ConfigLoading.file(#"{"logFormat": "json", "logLevel": "warning", "accessLog": true, "shutdownDrain": 2.5}"#)
        let config = try #require(try file.config(["--config", "/etc/httpdnsd.json"]))
        #expect(config.logFormat == .json && config.logLevel == .warning && config.accessLog && config.shutdownDrain == 2.5)
        let flagged = try #require(
            try file.config(
                ["--config", "/etc/httpdnsd.json", "--log-format=text", "--access-log", "false", "--shutdown-drain", "0"],
                env: ["HTTPDNS_LOG_LEVEL": "debug"]))
        #expect(flagged.logFormat == .text && flagged.logLevel == .debug && !flagged.accessLog && flagged.shutdownDrain == 0)
        let defaults = try #require(try ConfigLoading().config())
        #expect(defaults.logFormat == .text && defaults.logLevel == .info && !defaults.accessLog && defaults.shutdownDrain == 5)
    }

    @Test func badLogAndDrainValuesAreNamed() {
        #expect(ConfigLoading.fileError(#"{"logFormat": "xml"}"#) == ConfigError(key: "logFormat", "must be text or json, got 'xml'"))
        #expect(ConfigLoading().error(env: ["HTTPDNS_LOG_LEVEL": "verbose"])?.key == "HTTPDNS_LOG_LEVEL")
        #expect(ConfigLoading().error(["--access-log", "maybe"])?.key == "--access-log")
        #expect(ConfigLoading().error(["--shutdown-drain", "301"])?.key == "--shutdown-drain")
        #expect(ConfigLoading.fileError(#"{"shutdownDrain": true}"#)?.key == "shutdownDrain")
    }

    @Test func theWriteBehindBoundComesFromFileEnvironmentAndFlagsWithinItsRange() throws {
        #expect(try ConfigLoading().config()?.storeMaxPendingChanges == 500_000)
        let file = ConfigLoading.file(#"{"storeMaxPendingChanges": 1000}"#)
        #expect(try file.config(["--config", "/etc/httpdnsd.json"])?.storeMaxPendingChanges == 1_000)
        #expect(try ConfigLoading().config(env: ["HTTPDNS_STORE_MAX_PENDING_CHANGES": "2000"])?.storeMaxPendingChanges == 2_000)
        #expect(try ConfigLoading().config(["--store-max-pending-changes", "100"])?.storeMaxPendingChanges == 100)
        #expect(ConfigLoading().error(["--store-max-pending-changes", "99"])?.key == "--store-max-pending-changes")
        #expect(ConfigLoading().error(["--store-max-pending-changes", "lots"])?.key == "--store-max-pending-changes")
        #expect(ConfigLoading.fileError(#"{"storeMaxPendingChanges": 100000001}"#)?.key == "storeMaxPendingChanges")
        #expect(ServiceConfig.helpText.contains("--store-max-pending-changes"))
    }

    @Test func versionFlagReportsTheBuild() throws {
        let invocation = try ServiceConfig.load(arguments: ["--threads", "2", "--version"], environment: [:]) { _ in Data() }
        #expect(invocation == .version(BuildInfo.versionLine))
        #expect(BuildInfo.versionLine.hasPrefix("httpdnsd \(BuildInfo.version) (Swift 6."))
        #expect(ServiceConfig.helpText.contains("--version"))
    }
}
