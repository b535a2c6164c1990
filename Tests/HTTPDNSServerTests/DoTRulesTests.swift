import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// The DoT listener's rules with no socket and no TLS: the account a TLS server name selects,
/// the phase a connection is in, and when it is cut.
@Suite struct DoTRulesTests {
    let domain = "dot.example.net"

    @Test func oneLabelBeforeTheDomainIsTheAccount() {
        #expect(DoTAccountName.account(serverName: "acme.dot.example.net", domain: domain) == "acme")
        #expect(DoTAccountName.account(serverName: "acme.dot.example.net.", domain: domain) == "acme")
        // The domain compares case-insensitively; the label is the account id as sent.
        #expect(DoTAccountName.account(serverName: "Fleet-2.DOT.Example.NET", domain: "dot.example.net") == "Fleet-2")
        #expect(DoTAccountName.account(serverName: "a_b.dot.example.net", domain: domain) == "a_b")
    }

    @Test func anyOtherNameOrNoneIsTheDefaultAccount() {
        for name in [
            nil, "", "dot.example.net", "x.y.dot.example.net", "acme.example.net", "acmedot.example.net", "acme.dot.example.net.evil",
            // Not an account id: reserved, or too long.
            "metrics.dot.example.net", String(repeating: "a", count: 65) + ".dot.example.net",
        ] {
            #expect(DoTAccountName.account(serverName: name, domain: domain) == "default", "\(name ?? "nil")")
        }
        // Without dotAccountDomain every name is the default account.
        #expect(DoTAccountName.account(serverName: "acme.dot.example.net", domain: nil) == "default")
    }

    /// Every GnuTLS result the loop sees, read in one place.
    @Test func gnuTLSResultsMapToWhatTheLoopDoes() {
        #expect(TLSStep.of(120, .receive) == .done(120))
        #expect(TLSStep.of(0, .receive) == .closed)
        #expect(TLSStep.of(0, .handshake) == .done(0))
        #expect(TLSStep.of(-28, .send) == .again)  // GNUTLS_E_AGAIN
        #expect(TLSStep.of(-52, .receive) == .retry)  // GNUTLS_E_INTERRUPTED
        #expect(TLSStep.of(-16, .handshake) == .retry)  // GNUTLS_E_WARNING_ALERT_RECEIVED
        #expect(TLSStep.of(-110, .receive) == .closed)  // GNUTLS_E_PREMATURE_TERMINATION
        guard case .failed(let reason) = TLSStep.of(-8, .handshake) else {  // GNUTLS_E_UNSUPPORTED_VERSION_PACKET
            Issue.record("a fatal error must fail")
            return
        }
        #expect(reason.hasPrefix("handshake: ") && reason.contains("GnuTLS -8"), "\(reason)")
    }

    @Test func thePhaseFollowsWhatTheConnectionWaitsFor() {
        #expect(DoTTimeouts.phase(gotQuery: false, partial: true, wholeWaiting: false, inFlight: 0) == .opening)
        #expect(DoTTimeouts.phase(gotQuery: true, partial: false, wholeWaiting: false, inFlight: 0) == .idle)
        #expect(DoTTimeouts.phase(gotQuery: true, partial: false, wholeWaiting: false, inFlight: 2) == .handling)
        #expect(DoTTimeouts.phase(gotQuery: true, partial: true, wholeWaiting: false, inFlight: 2) == .reading)
        // A whole query held back at the in-flight limit is the listener's wait, not the client's.
        #expect(DoTTimeouts.phase(gotQuery: true, partial: true, wholeWaiting: true, inFlight: 64) == .handling)
    }

    @Test func deadlinesByPhase() {
        let timeouts = DoTTimeouts(idleTimeout: 30_000, readTimeout: 10_000)
        #expect(timeouts.cut(phase: .opening, since: 0, stalledSince: nil, now: 9_999) == nil)
        #expect(timeouts.cut(phase: .opening, since: 0, stalledSince: nil, now: 10_000) == .slow)
        #expect(timeouts.cut(phase: .reading, since: 5_000, stalledSince: nil, now: 15_000) == .slow)
        #expect(timeouts.cut(phase: .idle, since: 0, stalledSince: nil, now: 29_999) == nil)
        #expect(timeouts.cut(phase: .idle, since: 0, stalledSince: nil, now: 30_000) == .idle)
        #expect(timeouts.cut(phase: .handling, since: 0, stalledSince: nil, now: 1_000_000) == nil)
        // Responses the client does not take: slow, whatever the phase.
        #expect(timeouts.cut(phase: .handling, since: 0, stalledSince: 1_000, now: 11_000) == .slow)
        #expect(timeouts.cut(phase: .idle, since: 10_500, stalledSince: 1_000, now: 10_999) == nil)
        // requestReadTimeout 0: no read deadline, the idle timeout still applies.
        let unbounded = DoTTimeouts(idleTimeout: 30_000, readTimeout: 0)
        #expect(unbounded.cut(phase: .opening, since: 0, stalledSince: 0, now: 1_000_000) == nil)
        #expect(unbounded.cut(phase: .idle, since: 0, stalledSince: nil, now: 30_000) == .idle)
    }
}
