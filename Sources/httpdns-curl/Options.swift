import Foundation

/// The command line of `httpdns-curl`, with the environment's defaults.
struct Options {
    static let usage = """
        Usage: httpdns-curl [options] URL

        Resolves URL's host through an httpdnsd service, then fetches URL with libcurl connected
        to the address found, while the Host header, TLS server name (SNI) and certificate
        verification keep the name (CURLOPT_RESOLVE). When an address refuses the connection
        the next one is tried.

          --service URL    the service (default $HTTPDNS_SERVICE, else http://127.0.0.1:8080)
          --account ID     the account (default $HTTPDNS_ACCOUNT, else default)
          --key-id K       sign requests with client key K (default $HTTPDNS_KEY_ID)
          --secret S       the key's secret (default $HTTPDNS_SECRET; prefer the variable)
          --cacert FILE    verify the server's certificate with these CAs
          -o FILE          write the body to FILE instead of standard output
          -v               say which address is used, and why
          -h, --help       this text

        Exit status: 0 when the transfer worked (whatever the HTTP status), 2 for a bad
        command line, 6 when the name could not be resolved, 7 when no address accepted the
        connection, else libcurl's error code.
        """

    var service = "http://127.0.0.1:8080"
    var account = "default"
    var keyID: String?
    var secret: String?
    var caCertificates: String?
    var output: String?
    var verbose = false
    var url = ""

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads `arguments` (without the program's name) over `environment`'s defaults; nil for `--help`.
    static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Options? {
        var options = Options()
        if let service = environment["HTTPDNS_SERVICE"], !service.isEmpty { options.service = service }
        if let account = environment["HTTPDNS_ACCOUNT"], !account.isEmpty { options.account = account }
        options.keyID = environment["HTTPDNS_KEY_ID"].flatMap { $0.isEmpty ? nil : $0 }
        options.secret = environment["HTTPDNS_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
        var urls: [String] = []
        var rest = arguments[...]
        func value(_ flag: String) throws(UsageError) -> String {
            guard let next = rest.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
            return next
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "-h", "--help": return nil
            case "--service": options.service = try value(argument)
            case "--account": options.account = try value(argument)
            case "--key-id": options.keyID = try value(argument)
            case "--secret": options.secret = try value(argument)
            case "--cacert": options.caCertificates = try value(argument)
            case "-o", "--output": options.output = try value(argument)
            case "-v", "--verbose": options.verbose = true
            default:
                guard !argument.hasPrefix("-") else { throw UsageError(description: "unknown option \(argument)") }
                urls.append(argument)
            }
        }
        guard urls.count == 1 else { throw UsageError(description: urls.isEmpty ? "no URL given" : "give one URL") }
        guard (options.keyID == nil) == (options.secret == nil) else {
            throw UsageError(description: "--key-id and --secret go together")
        }
        options.url = urls[0]
        return options
    }
}
