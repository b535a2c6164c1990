import Foundation
import HTTPDNSCore
import Testing

@testable import HTTPDNSConfig

/// The service keys of the HTTPS, operations and plain listeners and the connection limits.
@Suite struct ListenerSettingsTests {
    @Test func defaultsLimitEachAddressAndEachRequestRead() throws {
        let config = try #require(try ConfigLoading().config())
        #expect(config.perIPConnectionLimit == 64)
        #expect(config.requestReadTimeout == 10)
        #expect(config.connectionTimeout == 30)
        #expect(config.tlsCertificatePath == nil && config.tlsKeyPath == nil)
        #expect(config.opsListen == nil && config.listenPlain == nil)
    }

    @Test func listenersAndTLSComeFromFileEnvironmentAndFlags() throws {
        let loading = ConfigLoading.file(
            """
            {"tlsCert": "/tls/tls.crt", "tlsKey": "/tls/tls.key", "listenPlain": "127.0.0.1:8081",
             "opsListen": "127.0.0.1:9090", "requestReadTimeout": 5}
            """)
        let file = try #require(try loading.config(["--config", "/etc/httpdnsd.json"]))
        #expect(file.tlsCertificatePath == "/tls/tls.crt")
        #expect(file.tlsKeyPath == "/tls/tls.key")
        #expect(file.listenPlain == ListenAddress(host: "127.0.0.1", port: 8081))
        #expect(file.opsListen == ListenAddress(host: "127.0.0.1", port: 9090))
        #expect(file.requestReadTimeout == 5)

        let env = [
            "HTTPDNS_OPS_LISTEN": "[::1]:9091", "HTTPDNS_TLS_CERT": "/env/cert.pem", "HTTPDNS_TLS_KEY": "/env/key.pem",
            "HTTPDNS_REQUEST_READ_TIMEOUT": "0",
        ]
        let fromEnv = try #require(try ConfigLoading().config([], env: env))
        #expect(fromEnv.opsListen?.description == "[::1]:9091")
        #expect(fromEnv.tlsCertificatePath == "/env/cert.pem")
        #expect(fromEnv.requestReadTimeout == 0)

        let fromFlags = try #require(
            try ConfigLoading().config(["--ops-listen", "127.0.0.1:9092", "--per-ip-connection-limit", "0"], env: env))
        #expect(fromFlags.opsListen == ListenAddress(host: "127.0.0.1", port: 9092))
        #expect(fromFlags.perIPConnectionLimit == 0)
    }

    @Test func tlsNeedsBothFilesAndAPlainListenerNeedsTLS() {
        #expect(ConfigLoading().error(["--tls-cert", "/c.pem"])?.key == "tlsKey")
        #expect(ConfigLoading().error(["--tls-key", "/k.pem"])?.key == "tlsCert")
        #expect(ConfigLoading().error(["--listen-plain", "127.0.0.1:8081"])?.key == "listenPlain")
        #expect(ConfigLoading().error(["--ops-listen", "example.com:9090"])?.key == "--ops-listen")
        #expect(ConfigLoading().error(["--request-read-timeout", "-1"])?.key == "--request-read-timeout")
    }

    @Test func anIPv6ClientIsItsSlash64UnlessTheConfigurationSaysOtherwise() throws {
        #expect(try #require(try ConfigLoading().config()).clientIPv6PrefixLength == 64)
        let file = try #require(try ConfigLoading.file(#"{"clientIPv6PrefixLength": 56}"#).config(["--config", "/etc/httpdnsd.json"]))
        #expect(file.clientIPv6PrefixLength == 56)
        let env = try #require(try ConfigLoading().config([], env: ["HTTPDNS_CLIENT_IPV6_PREFIX_LENGTH": "128"]))
        #expect(env.clientIPv6PrefixLength == 128)
        // Out of range or not a number: refused at start-up, naming the key.
        let tooShort = try #require(ConfigLoading.fileError(#"{"clientIPv6PrefixLength": 16}"#))
        #expect(tooShort.description == "clientIPv6PrefixLength: must be a whole number between 32 and 128, got '16'")
        #expect(ConfigLoading().error(["--client-ipv6-prefix-length", "129"])?.key == "--client-ipv6-prefix-length")
        #expect(ConfigLoading().error([], env: ["HTTPDNS_CLIENT_IPV6_PREFIX_LENGTH": "/64"])?.key == "HTTPDNS_CLIENT_IPV6_PREFIX_LENGTH")
    }

    @Test func helpListsTheNewKeys() {
        for flag in ["--tls-cert", "--tls-key", "--listen-plain", "--ops-listen", "--request-read-timeout", "--client-ipv6-prefix-length"] {
            #expect(ServiceConfig.helpText.contains(flag))
        }
    }

    @Test func thePlainDNSListenerIsOffUntilSetAndAnswersForDefaultUnlessTold() throws {
        let none = try #require(try ConfigLoading().config())
        #expect(none.dnsListen == nil && none.dnsAccount == "default")
        let file = try #require(
            try ConfigLoading.file(#"{"dnsListen": "0.0.0.0:53", "dnsAccount": "fleet"}"#).config(["--config", "/etc/httpdnsd.json"]))
        #expect(file.dnsListen == ListenAddress(host: "0.0.0.0", port: 53))
        #expect(file.dnsAccount == "fleet")
        let env = try #require(try ConfigLoading().config([], env: ["HTTPDNS_DNS_LISTEN": "[::1]:5353"]))
        #expect(env.dnsListen?.description == "[::1]:5353")
        let flags = try #require(try ConfigLoading().config(["--dns-listen", "127.0.0.1:5300", "--dns-account", "a1"]))
        #expect(flags.dnsListen == ListenAddress(host: "127.0.0.1", port: 5300) && flags.dnsAccount == "a1")
        // Refused at start-up, naming the key.
        #expect(ConfigLoading().error(["--dns-listen", "dns.example:53"])?.key == "--dns-listen")
        #expect(ConfigLoading().error([], env: ["HTTPDNS_DNS_LISTEN": "127.0.0.1"])?.key == "HTTPDNS_DNS_LISTEN")
        #expect(ConfigLoading.fileError(#"{"dnsAccount": "no/such"}"#)?.key == "dnsAccount")
        #expect(ServiceConfig.helpText.contains("--dns-listen") && ServiceConfig.helpText.contains("--dns-account"))
    }
}
