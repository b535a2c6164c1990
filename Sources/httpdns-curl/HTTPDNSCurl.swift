import CCurl
import Foundation
import HTTPDNSClient

/// `httpdns-curl`: curl that resolves through httpdnsd (see `Options.usage`).
@main
struct HTTPDNSCurl {
    static func main() async {
        let options: Options
        do {
            guard let parsed = try Options.parse(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
            else {
                print(Options.usage)
                exit(0)
            }
            options = parsed
        } catch {
            fail(2, "\(error) (see --help)")
        }
        guard let components = URLComponents(string: options.url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else {
            fail(2, "not an http or https URL: \(options.url)")
        }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        let addresses = await addresses(of: host, options)
        exit(await fetch(options, host: host, port: port, addresses: addresses))
    }

    /// The addresses to try for `host`: the literal itself, else the service's answer.
    static func addresses(of host: String, _ options: Options) async -> [String] {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        if IPv4Literal.matches(bare) || bare.contains(":") { return [bare] }
        guard let service = URL(string: options.service), service.scheme != nil else {
            fail(2, "not a service URL: \(options.service)")
        }
        let credentials = options.keyID.map { HTTPDNSCredentials(keyID: $0, secret: options.secret ?? "") }
        let client = HTTPDNSClient(
            configuration: HTTPDNSClientConfiguration(
                services: [service], account: options.account, credentials: credentials, family: .both))
        do {
            let answer = try await client.resolve(host)
            let origin = answer.source == .system ? "the system resolver (the service did not answer)" : "\(service.absoluteString)"
            say(options, "\(host) resolved by \(origin): \(answer.addresses.joined(separator: ", "))")
            guard !answer.addresses.isEmpty else { fail(6, "\(host) has no address" + (answer.nxdomain ? " (NXDOMAIN)" : "")) }
            return answer.addresses
        } catch {
            fail(6, "could not resolve \(host): \(error)")
        }
    }

    /// Fetches from each address in turn until one accepts the connection; returns the exit status.
    static func fetch(_ options: Options, host: String, port: Int, addresses: [String]) async -> Int32 {
        guard let transfer = Transfer() else { fail(2, "libcurl could not start") }
        let file: UnsafeMutablePointer<FILE>
        if let path = options.output {
            guard let opened = fopen(path, "wb") else { fail(23, "cannot write \(path): \(String(cString: strerror(errno)))") }
            file = opened
        } else {
            guard let standardOutput = fdopen(STDOUT_FILENO, "wb") else { fail(23, "cannot write standard output") }
            file = standardOutput
        }
        defer { fclose(file) }
        let sink = Transfer.Sink(file)
        var last: Transfer.Failure?
        for (index, address) in addresses.enumerated() {
            say(options, "connecting to \(address) port \(port) (Host, SNI and certificate name: \(host))")
            do throws(Transfer.Failure) {
                try transfer.fetch(
                    options.url, host: host, port: port, address: address, caCertificates: options.caCertificates, sink: sink)
                say(options, "\(address) answered HTTP \((try? transfer.status()) ?? 0)")
                return 0
            } catch {
                last = error
                let connectionFailed =
                    sink.written == 0 && (error.code == CURLE_COULDNT_CONNECT || error.code == CURLE_OPERATION_TIMEDOUT)
                guard connectionFailed else { break }
                let next = index + 1 < addresses.count ? "; trying the next address" : ""
                say(options, "\(address) did not accept the connection (\(error.message))\(next)")
            }
        }
        let failure = last ?? Transfer.Failure(code: CURLE_COULDNT_CONNECT, message: "no address")
        FileHandle.standardError.write(Data("httpdns-curl: \(failure.message)\n".utf8))
        return Int32(failure.code.rawValue)
    }

    /// With `-v`, one line on standard error.
    static func say(_ options: Options, _ line: String) {
        guard options.verbose else { return }
        FileHandle.standardError.write(Data("* httpdns-curl: \(line)\n".utf8))
    }

    static func fail(_ status: Int32, _ message: String) -> Never {
        FileHandle.standardError.write(Data("httpdns-curl: \(message)\n".utf8))
        exit(status)
    }
}

/// Dotted-quad IPv4 literals, which need no resolving.
enum IPv4Literal {
    static func matches(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in UInt8(part) != nil }
    }
}
