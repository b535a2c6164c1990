import Foundation
import HTTPDNSCore
import Testing

@testable import HTTPDNSConfig

@Suite struct ServiceConfigTests {
    private let path = "/etc/httpdnsd.json"

    @Test func noFileNoEnvironmentNoFlagsGivesTheEmbeddedDefault() throws {
        let config = try #require(try ConfigLoading().config())
        #expect(config == ServiceConfig())
        #expect(config.listen == "127.0.0.1:8080")
        #expect(config.databasePath == "./httpdnsd.sqlite")
        #expect(Array(config.accounts.keys) == ["default"])
        #expect(config.accounts["default"]?.upstreams == AccountConfig.publicDefaultUpstreams)
        #expect(config.accounts["default"]?.localDNSFallback == true)
        #expect(config.trustedProxies.isEmpty)
    }

    @Test func fileSettingsAndAccountsAreRead() throws {
        let loading = ConfigLoading.file(
            """
            {"listen": "127.0.0.2:9000", "db": "/var/lib/httpdnsd/db.sqlite", "threads": 4, "adminToken": "secret-token",
             "preloadConcurrency": "16",
             "accounts": {"shop": {"upstreams": ["doh:http://127.0.0.1:8053/dns-query"], "maxCacheTTL": 600, "cacheEnable": false}}}
            """)
        let config = try #require(try loading.config(["--config", path]))
        #expect(config.listenHost == "127.0.0.2")
        #expect(config.listenPort == 9000)
        #expect(config.databasePath == "/var/lib/httpdnsd/db.sqlite")
        #expect(config.threads == 4)
        #expect(config.preloadConcurrency == 16)
        #expect(config.adminToken == "secret-token")
        #expect(Array(config.accounts.keys) == ["shop"])
        let shop = try #require(config.accounts["shop"])
        #expect(shop.upstreams == [UpstreamSpec(kind: .doh, url: "http://127.0.0.1:8053/dns-query")])
        #expect(shop.maxCacheTTL == 600)
        #expect(!shop.cacheEnable)
        // Keys not in the file keep their defaults.
        #expect(shop.maxNegativeCache == AccountConfig().maxNegativeCache)
        #expect(shop.timeout == AccountConfig().timeout)
    }

    @Test func environmentOverridesTheFileAndFlagsOverrideBoth() throws {
        let loading = ConfigLoading.file(#"{"listen": "127.0.0.2:9000", "threads": 4, "connectionLimit": 100}"#)
        let env = ["HTTPDNS_LISTEN": "127.0.0.3:9001", "HTTPDNS_THREADS": "8"]

        let fileOnly = try #require(try loading.config(["--config", path]))
        #expect(fileOnly.listen == "127.0.0.2:9000")

        let withEnv = try #require(try loading.config(["--config", path], env: env))
        #expect(withEnv.listen == "127.0.0.3:9001")
        #expect(withEnv.threads == 8)
        #expect(withEnv.connectionLimit == 100)

        let withFlags = try #require(try loading.config(["--config", path, "--listen", "127.0.0.4:9002", "--threads=2"], env: env))
        #expect(withFlags.listen == "127.0.0.4:9002")
        #expect(withFlags.threads == 2)
        #expect(withFlags.connectionLimit == 100)
    }

    @Test func configFileComesFromTheEnvironmentUnlessAFlagNamesOne() throws {
        let loading = ConfigLoading(files: [
            "/env.json": #"{"threads": 3}"#,
            "/flag.json": #"{"threads": 5}"#,
        ])
        #expect(try loading.config(env: ["HTTPDNS_CONFIG": "/env.json"])?.threads == 3)
        #expect(try loading.config(["--config=/flag.json"], env: ["HTTPDNS_CONFIG": "/env.json"])?.threads == 5)
    }

    @Test func unreadableConfigFileIsAnErrorOnConfig() {
        let error = ConfigLoading().error(["--config", "/nowhere.json"])
        #expect(error?.key == "--config")
        #expect(error?.message.contains("/nowhere.json") == true)
    }

    @Test func fileThatIsNotAJSONObjectIsAnError() {
        #expect(ConfigLoading.fileError("[1, 2]")?.key == path)
        #expect(ConfigLoading.fileError("{not json")?.key == path)
    }

    @Test(arguments: ["--help", "-h"])
    func helpIsReturnedWithoutReadingAnything(_ flag: String) throws {
        let invocation = try ServiceConfig.load(arguments: ["--threads", "2", flag, "--config", "/x.json"], environment: [:]) { _ in
            Issue.record("help must not read the config file")
            return Data()
        }
        guard case .help(let text) = invocation else {
            Issue.record("expected help, got \(invocation)")
            return
        }
        for word in [
            "--config", "--listen", "HTTPDNS_LISTEN", "--trusted-proxies", "HTTPDNS_TRUSTED_PROXIES", "--upstreams", "HTTPDNS_UPSTREAMS",
            "--localdns-servers", "maxCacheTTL", "accessKeySecret", "--metrics-accounts", "HTTPDNS_METRICS_ACCOUNTS",
            "--metrics-histograms",
        ] {
            #expect(text.contains(word), "help should mention \(word)")
        }
    }

    @Test func unknownFlagIsNamed() {
        #expect(ConfigLoading().error(["--bogus", "1"])?.key == "--bogus")
        #expect(ConfigLoading().error(["--bogus=1"])?.key == "--bogus=1")
        #expect(ConfigLoading().error(["stray"])?.key == "stray")
    }

    @Test func flagWithoutValueIsAnError() {
        let error = ConfigLoading().error(["--threads"])
        #expect(error?.key == "--threads")
        #expect(error?.message == "needs a value")
    }

    @Test func unknownTopLevelKeyIsNamed() {
        #expect(ConfigLoading.fileError(#"{"listn": "127.0.0.1:80"}"#)?.key == "listn")
    }

    @Test func unknownAccountKeyIsNamedWithItsPath() {
        let error = ConfigLoading.fileError(#"{"accounts": {"shop": {"maxCacheTTLx": 60}}}"#)
        #expect(error?.key == "accounts.shop.maxCacheTTLx")
        #expect(error?.message.contains("unknown key") == true)
    }

    @Test(arguments: [
        (#"{"timeout": "3"}"#, "accounts.shop.timeout"),
        (#"{"cacheEnable": "yes"}"#, "accounts.shop.cacheEnable"),
        (#"{"ipv6Enable": 1}"#, "accounts.shop.ipv6Enable"),
        (#"{"maxCacheTTL": true}"#, "accounts.shop.maxCacheTTL"),
        (#"{"maxCacheTTL": 1.5}"#, "accounts.shop.maxCacheTTL"),
        (#"{"maxCacheTTL": 0}"#, "accounts.shop.maxCacheTTL"),
        (#"{"cacheCountLimit": -1}"#, "accounts.shop.cacheCountLimit"),
        (#"{"timeout": 0}"#, "accounts.shop.timeout"),
        (#"{"upstreams": "json:http://127.0.0.1:1/resolve"}"#, "accounts.shop.upstreams"),
        (#"{"upstreams": ["json:http://127.0.0.1:1/resolve", 7]}"#, "accounts.shop.upstreams[1]"),
        (#"{"localDNSServers": ["127.0.0.1:53", "a b"]}"#, "accounts.shop.localDNSServers[1]"),
        (#"{"accessKeySecret": 12}"#, "accounts.shop.accessKeySecret"),
        (#"{"upstreams": [], "localDNSFallback": false}"#, "accounts.shop.upstreams"),
    ])
    func accountTypeAndRangeErrorsNameTheKey(_ body: String, _ key: String) {
        #expect(ConfigLoading.fileError(#"{"accounts": {"shop": \#(body)}}"#)?.key == key)
    }

    @Test(arguments: [
        (#"{"threads": "many"}"#, "threads"),
        (#"{"threads": [1]}"#, "threads"),
        (#"{"threads": 1000}"#, "threads"),
        (#"{"threads": 2.5}"#, "threads"),
        (#"{"listen": 8080}"#, "listen"),
        (#"{"db": ""}"#, "db"),
        (#"{"adminToken": "short"}"#, "adminToken"),
        (#"{"accounts": []}"#, "accounts"),
        (#"{"accounts": {}}"#, "accounts"),
        (#"{"accounts": {"shop": 1}}"#, "accounts.shop"),
        (#"{"accounts": {"bad id": {}}}"#, "accounts.bad id"),
        (#"{"accounts": {"accounts": {}}}"#, "accounts.accounts"),
    ])
    func serviceTypeErrorsNameTheKey(_ json: String, _ key: String) {
        #expect(ConfigLoading.fileError(json)?.key == key)
    }

    @Test func booleanForANumericSettingIsATypeError() {
        #expect(ConfigLoading.fileError(#"{"threads": true}"#)?.key == "threads")
    }

    @Test func environmentAndFlagErrorsNameTheVariableOrFlag() {
        #expect(ConfigLoading().error(env: ["HTTPDNS_THREADS": "abc"])?.key == "HTTPDNS_THREADS")
        #expect(ConfigLoading().error(["--threads=abc"])?.key == "--threads")
        #expect(ConfigLoading().error(["--connection-limit", "0"])?.key == "--connection-limit")
        #expect(ConfigLoading().error(env: ["HTTPDNS_LOCALDNS_FALLBACK": "maybe"])?.key == "HTTPDNS_LOCALDNS_FALLBACK")
    }

    @Test(arguments: [
        ("nocolon", "is not KIND:URL"),
        ("dns:https://127.0.0.1/dns-query", "unknown upstream kind 'dns'"),
        ("json:ftp://127.0.0.1/resolve", "must start with http:// or https://"),
        ("json:http:///resolve", "has no host"),
        ("json:https://", "has no host"),
        ("doh:http://a b/x", "holds a space"),
        ("doh:http://127.0.0.1/dns query", "holds a space"),
        ("doh:http://127.0.0.1/x{y}", "holds '{'"),
        ("json:http://bad_host!/resolve", "is not a host name or IP address"),
        ("json:http://127.0.0.1:99999/resolve", "is not a host name or IP address with an optional port"),
        ("json:http://127.0.0.1:/resolve", "with an optional port"),
        ("json:http://[127.0.0.1]/resolve", "with an optional port"),
    ])
    func badUpstreamSpecIsRejectedWithItsIndex(_ spec: String, _ message: String) throws {
        let error = try #require(
            ConfigLoading.fileError(#"{"accounts": {"shop": {"upstreams": ["json:http://127.0.0.1:1/resolve", "\#(spec)"]}}}"#))
        #expect(error.key == "accounts.shop.upstreams[1]")
        #expect(error.message.contains(message))
        #expect(ConfigLoading().error(env: ["HTTPDNS_UPSTREAMS": spec])?.key == "HTTPDNS_UPSTREAMS")
        #expect(ConfigLoading().error(["--upstreams", spec])?.key == "--upstreams")
    }

    @Test func upstreamsVariableAppliesToTheDefaultAccount() throws {
        let env = ["HTTPDNS_UPSTREAMS": "json:http://127.0.0.1:8053/resolve, doh:http://[::1]:8054/dns-query,"]
        let config = try #require(try ConfigLoading().config(env: env))
        #expect(
            config.accounts["default"]?.upstreams == [
                UpstreamSpec(kind: .json, url: "http://127.0.0.1:8053/resolve"),
                UpstreamSpec(kind: .doh, url: "http://[::1]:8054/dns-query"),
            ])
        // The flag wins over the variable.
        let flagged = try #require(try ConfigLoading().config(["--upstreams", "httpdns:http://127.0.0.1:9/d"], env: env))
        #expect(flagged.accounts["default"]?.upstreams == [UpstreamSpec(kind: .httpdns, url: "http://127.0.0.1:9/d")])
    }

    @Test func upstreamsVariableLeavesOtherAccountsAlone() throws {
        let loading = ConfigLoading.file(
            """
            {"accounts": {"default": {"maxCacheTTL": 90}, "shop": {"upstreams": ["json:http://127.0.0.1:1/resolve"]}}}
            """)
        let config = try #require(try loading.config(["--config", path], env: ["HTTPDNS_UPSTREAMS": "doh:http://127.0.0.1:2/dns-query"]))
        #expect(config.accounts["default"]?.upstreams == [UpstreamSpec(kind: .doh, url: "http://127.0.0.1:2/dns-query")])
        #expect(config.accounts["default"]?.maxCacheTTL == 90)
        #expect(config.accounts["shop"]?.upstreams == [UpstreamSpec(kind: .json, url: "http://127.0.0.1:1/resolve")])
    }

    /// A file that declares no `default` account plus a default-account variable other than
    /// HTTPDNS_UPSTREAMS must not conjure a `default` account that resolves through the public
    /// Alibaba upstreams (either the variable is an error, or there is no such account).
    @Test(arguments: [("HTTPDNS_LOCALDNS_SERVERS", "127.0.0.1:53"), ("HTTPDNS_LOCALDNS_FALLBACK", "false")])
    func localDNSVariablesDoNotCreateADefaultAccountWithPublicUpstreams(_ variable: String, _ value: String) {
        let loading = ConfigLoading.file(#"{"accounts": {"shop": {"upstreams": ["json:http://127.0.0.1:1/resolve"]}}}"#)
        let config = try? loading.config(["--config", path], env: [variable: value])
        #expect(config?.accounts["default"]?.upstreams != AccountConfig.publicDefaultUpstreams)
    }

    @Test func emptyUpstreamsVariableIsAnError() {
        #expect(ConfigLoading().error(env: ["HTTPDNS_UPSTREAMS": " , "])?.key == "HTTPDNS_UPSTREAMS")
    }

    @Test func localDNSVariablesApplyToTheDefaultAccount() throws {
        let config = try #require(
            try ConfigLoading().config(env: ["HTTPDNS_LOCALDNS_SERVERS": "127.0.0.1:5353, [::1]:5353", "HTTPDNS_LOCALDNS_FALLBACK": "off"]))
        #expect(config.accounts["default"]?.localDNSServers == ["127.0.0.1:5353", "[::1]:5353"])
        #expect(config.accounts["default"]?.localDNSFallback == false)
        let on = try #require(try ConfigLoading().config(["--localdns-fallback", "YES"]))
        #expect(on.accounts["default"]?.localDNSFallback == true)
    }

    @Test(arguments: [
        ("127.0.0.1:8080", "127.0.0.1", UInt16(8080), "127.0.0.1:8080"),
        ("0.0.0.0:80", "0.0.0.0", 80, "0.0.0.0:80"),
        ("[::1]:8053", "::1", 8053, "[::1]:8053"),
        ("[::]:0", "::", 0, "[::]:0"),
        ("[2001:db8::1]:65535", "2001:db8::1", 65535, "[2001:db8::1]:65535"),
    ])
    func listenAcceptsIPv4AndBracketedIPv6(_ text: String, _ host: String, _ port: UInt16, _ rendered: String) throws {
        let config = try #require(try ConfigLoading().config(["--listen", text]))
        #expect(config.listenHost == host)
        #expect(config.listenPort == port)
        #expect(config.listen == rendered)
    }

    @Test(arguments: [
        "127.0.0.1", "[::1]", "[::1]8080", "[::1:8080", "localhost:8080", "127.0.0.1:65536", "127.0.0.1:http", ":8080", "999.0.0.1:80", "",
    ])
    func listenRejectsWhatIsNotAnAddressAndPort(_ text: String) {
        #expect(ConfigLoading().error(["--listen", text])?.key == "--listen")
        #expect(ConfigLoading().error(env: ["HTTPDNS_LISTEN": text])?.key == "HTTPDNS_LISTEN")
    }

    @Test func trustedProxiesComeFromAFileArrayOrAStringAndVariablesAndFlagsOverride() throws {
        let loading = ConfigLoading.file(#"{"trustedProxies": ["10.0.0.0/8", "::1", "192.0.2.7"]}"#)
        let fromFile = try #require(try loading.config(["--config", path]))
        #expect(fromFile.trustedProxies.map(\.description) == ["10.0.0.0/8", "::1/128", "192.0.2.7/32"])

        let fromString = try #require(try ConfigLoading.file(#"{"trustedProxies": "10.0.0.0/8, ::1"}"#).config(["--config", path]))
        #expect(fromString.trustedProxies.map(\.description) == ["10.0.0.0/8", "::1/128"])

        let fromEnv = try #require(try loading.config(["--config", path], env: ["HTTPDNS_TRUSTED_PROXIES": "172.16.0.0/12 ,fd00::/8,"]))
        #expect(fromEnv.trustedProxies.map(\.description) == ["172.16.0.0/12", "fd00::/8"])

        let fromFlag = try #require(
            try loading.config(["--config", path, "--trusted-proxies=127.0.0.1"], env: ["HTTPDNS_TRUSTED_PROXIES": "172.16.0.0/12"]))
        #expect(fromFlag.trustedProxies.map(\.description) == ["127.0.0.1/32"])

        // An empty value clears the list.
        #expect(try loading.config(["--config", path, "--trusted-proxies", ""])?.trustedProxies.isEmpty == true)
    }

    @Test(arguments: [
        (#"{"trustedProxies": ["10.0.0.0/8", "10.1.0.0/8"]}"#, "trustedProxies[1]"),
        (#"{"trustedProxies": ["10.0.0.0/8", 7]}"#, "trustedProxies[1]"),
        (#"{"trustedProxies": ["proxy.example"]}"#, "trustedProxies[0]"),
        (#"{"trustedProxies": "10.0.0.0/8, 10.0.0.0/33"}"#, "trustedProxies"),
        (#"{"trustedProxies": 10}"#, "trustedProxies"),
        (#"{"trustedProxies": true}"#, "trustedProxies"),
        (#"{"trustedProxies": {"a": "10.0.0.0/8"}}"#, "trustedProxies"),
    ])
    func badTrustedProxiesNameTheKey(_ json: String, _ key: String) {
        #expect(ConfigLoading.fileError(json)?.key == key)
    }

    @Test func badTrustedProxiesVariableOrFlagIsNamedWithTheValue() throws {
        let fromEnv = try #require(ConfigLoading().error(env: ["HTTPDNS_TRUSTED_PROXIES": "10.0.0.0/8,::1/129"]))
        #expect(fromEnv.key == "HTTPDNS_TRUSTED_PROXIES")
        #expect(fromEnv.message.contains("'::1/129'"))
        #expect(ConfigLoading().error(["--trusted-proxies", "everything"])?.key == "--trusted-proxies")
    }
}

/// `adminTokenFile` / `HTTPDNS_ADMIN_TOKEN_FILE` / `--admin-token-file`: the token from a file
/// (a mounted Kubernetes Secret).
@Suite struct AdminTokenFileTests {
    private let secretPath = "/run/secrets/admin-token"

    @Test(arguments: ["s3cr3t-admin-token", "s3cr3t-admin-token\n", "s3cr3t-admin-token\r\n"])
    func theTokenIsReadWithoutItsTrailingNewline(content: String) throws {
        let loading = ConfigLoading(files: [secretPath: content])
        let config = try #require(try loading.config(env: ["HTTPDNS_ADMIN_TOKEN_FILE": secretPath]))
        #expect(config.adminToken == "s3cr3t-admin-token")
        let flagged = try #require(try loading.config(["--admin-token-file", secretPath]))
        #expect(flagged.adminToken == "s3cr3t-admin-token")
    }

    @Test func anUnreadableFileIsAStartUpErrorNamingTheKey() throws {
        let error = try #require(ConfigLoading().error(env: ["HTTPDNS_ADMIN_TOKEN_FILE": secretPath]))
        #expect(error.description.contains("HTTPDNS_ADMIN_TOKEN_FILE"))
        let flag = try #require(ConfigLoading().error(["--admin-token-file", secretPath]))
        #expect(flag.description.contains("--admin-token-file"))
    }

    @Test(arguments: ["short\n", "", "\n", "two-lines-token\nsecond-line"])
    func aShortOrMultiLineFileIsRefusedWithoutShowingIt(content: String) throws {
        let loading = ConfigLoading(files: [secretPath: content])
        let error = try #require(loading.error(env: ["HTTPDNS_ADMIN_TOKEN_FILE": secretPath]))
        #expect(error.description.contains("HTTPDNS_ADMIN_TOKEN_FILE"))
        if !content.isEmpty && content != "\n" { #expect(!error.description.contains(content.trimmingCharacters(in: .newlines))) }
    }

    @Test func aTokenAndATokenFileTogetherAreRefused() throws {
        let loading = ConfigLoading(files: [secretPath: "s3cr3t-admin-token"])
        let error = try #require(loading.error(env: ["HTTPDNS_ADMIN_TOKEN_FILE": secretPath, "HTTPDNS_ADMIN_TOKEN": "other-token-1"]))
        #expect(error.description.contains("HTTPDNS_ADMIN_TOKEN_FILE"))
    }

    @Test func theServiceRateKeysAreRead() throws {
        let config = try #require(try ConfigLoading().config(["--rate-limit", "20.5", "--rate-burst", "40"]))
        #expect(config.rateLimit == 20.5)
        #expect(config.rateBurst == 40)
        #expect(ConfigLoading().error(env: ["HTTPDNS_RATE_LIMIT": "-1"])?.description.contains("HTTPDNS_RATE_LIMIT") == true)
        #expect(ConfigLoading().error(env: ["HTTPDNS_RATE_LIMIT": "nan"]) != nil)
    }

    @Test func theMetricsKeysAreReadFromFlagsEnvironmentAndFileAndBadValuesNamed() throws {
        #expect(try ConfigLoading().config([])?.metricsAccounts == .all)
        #expect(try ConfigLoading().config([])?.metricsHistograms == true)
        let flags = try #require(try ConfigLoading().config(["--metrics-accounts", "active", "--metrics-histograms", "false"]))
        #expect(flags.metricsAccounts == .active)
        #expect(flags.metricsHistograms == false)
        #expect(try ConfigLoading().config([], env: ["HTTPDNS_METRICS_ACCOUNTS": "none"])?.metricsAccounts == MetricsAccounts.none)
        let file = try ServiceConfig(json: ["metricsAccounts": "none", "metricsHistograms": "off"])
        #expect(file.metricsAccounts == MetricsAccounts.none && file.metricsHistograms == false)
        #expect(ConfigLoading().error(env: ["HTTPDNS_METRICS_ACCOUNTS": "some"])?.description.contains("HTTPDNS_METRICS_ACCOUNTS") == true)
        #expect(
            ConfigLoading().error(env: ["HTTPDNS_METRICS_HISTOGRAMS": "maybe"])?.description.contains("HTTPDNS_METRICS_HISTOGRAMS") == true)
    }
}
