import HTTPDNSCore
import Testing

@testable import HTTPDNSUpstream

/// DoH JSON bodies (WIRE-FORMATS §1) in every variant the parser must accept or reject.
struct DoHJSONParserTests {
    private func parse(_ text: String, _ family: RecordFamily = .a) -> Result<UpstreamAnswer, UpstreamError> {
        DoHJSONParser.parse(Array(text.utf8), family: family)
    }

    private func answer(_ text: String, _ family: RecordFamily = .a) throws -> UpstreamAnswer {
        try parse(text, family).get()
    }

    private func errorCode(_ text: String) -> UpstreamError.Code? {
        if case .failure(let error) = parse(text) { return error.code }
        return nil
    }

    @Test func numbersBeyondIntRangeAreNotNumbersInsteadOfATrap() throws {
        #expect(DoHJSONParser.integer(.number(integer: nil, double: 1e40)) == nil)
        #expect(DoHJSONParser.integer(.number(integer: nil, double: -1e300)) == nil)
        #expect(DoHJSONParser.integer(.number(integer: nil, double: 300.9)) == 300)
        #expect(DoHJSONParser.integer(.string(" 60\t")) == 60)
        #expect(DoHJSONParser.integer(.bool(true)) == nil)
        #expect(errorCode(#"{"Status":1e40,"Answer":[]}"#) == .malformed)
        let result = try answer(#"{"Status":0,"Answer":[{"type":1,"TTL":1e40,"data":"192.0.2.1"}]}"#)
        #expect(result.addresses == ["192.0.2.1"])
    }

    @Test func plainAnswerGivesAddressesAndMinimumTTL() throws {
        let body = """
            {"Status":0,"TC":false,"RD":true,"RA":true,"AD":false,"CD":false,
             "Question":[{"name":"www.example.com.","type":1}],
             "Answer":[{"name":"www.example.com.","type":1,"TTL":300,"data":"192.0.2.10"},
                       {"name":"www.example.com.","type":1,"TTL":120,"data":"192.0.2.11"}]}
            """
        let result = try answer(body)
        #expect(result.addresses == ["192.0.2.10", "192.0.2.11"])
        #expect(result.ttl == 120)
        #expect(!result.nxdomain)
    }

    @Test func cnameChainKeepsOnlyAskedTypeAndTakesMinimumTTLOverChain() throws {
        let body = """
            {"Status":0,"Answer":[{"name":"www.example.com.","type":5,"TTL":30,"data":"edge.example.net."},
            {"name":"edge.example.net.","type":1,"TTL":60,"data":"192.0.2.10"}]}
            """
        let result = try answer(body)
        #expect(result.addresses == ["192.0.2.10"])
        #expect(result.ttl == 30)
    }

    @Test func aChainEndingInACNAMEWithoutAddressesNamesItsTargetAndMinimumTTL() throws {
        let body = """
            {"Status":0,"Question":[{"name":"api.example.test.","type":1}],
            "Answer":[{"name":"api.example.test.","type":5,"TTL":60,"data":"mid.example.test."},
            {"name":"mid.example.test.","type":5,"TTL":120,"data":"www.example.test."}]}
            """
        let result = try answer(body)
        #expect(result.addresses.isEmpty && !result.nxdomain)
        #expect(result.cnameTarget == HostName("www.example.test"))
        #expect(result.ttl == 60)
    }

    @Test func aNoDataReplyWithoutCNAMEHasNoTarget() throws {
        let result = try answer(#"{"Status":0,"Answer":[]}"#)
        #expect(result.cnameTarget == nil)
    }

    @Test func stringStatusTypeAndTTLAreAccepted() throws {
        let body = """
            {"Status":"0","Answer":[{"name":"a.example.","type":"28","TTL":"77","data":"2001:DB8::1"}]}
            """
        let result = try answer(body, .aaaa)
        #expect(result.addresses == ["2001:db8::1"])
        #expect(result.ttl == 77)
    }

    @Test func recordsOfTheOtherFamilyAreDropped() throws {
        let body = """
            {"Status":0,"Answer":[{"name":"a.","type":1,"TTL":60,"data":"192.0.2.1"},
            {"name":"a.","type":28,"TTL":60,"data":"2001:db8::1"}]}
            """
        #expect(try answer(body, .aaaa).addresses == ["2001:db8::1"])
        #expect(try answer(body, .a).addresses == ["192.0.2.1"])
    }

    @Test func nxdomainTakesNegativeTTLFromSOAMinimum() throws {
        let body = """
            {"Status":3,"Question":[{"name":"nope.example.com.","type":1}],
             "Authority":[{"name":"example.com.","type":6,"TTL":600,
               "data":"ns1.example.com. hostmaster.example.com. 2024010101 7200 3600 1209600 45"}]}
            """
        let result = try answer(body)
        #expect(result.nxdomain)
        #expect(result.addresses.isEmpty)
        #expect(result.negativeTTL == 45)
    }

    /// The first SOA of `Authority` is kept whole for the cache to send on (WIRE-FORMATS §1:
    /// `data` is `mname rname serial refresh retry expire minimum`), whatever the Status.
    @Test func negativeAnswersKeepTheAuthoritySOA() throws {
        let nxdomain = try answer(
            """
            {"Status":3,"Question":[{"name":"nope.example.com.","type":1}],
             "Authority":[{"name":"example.com.","type":6,"TTL":600,
               "data":"ns1.example.com. hostmaster.example.com. 2024010101 7200 3600 1209600 45"}]}
            """)
        #expect(nxdomain.soa?.description == "example.com. ns1.example.com. hostmaster.example.com. 2024010101 7200 3600 1209600 45")
        let nodata = try answer(
            """
            {"Status":"0","Answer":[],"Authority":[{"name":"example.net","type":"SOA","TTL":"60","data":"ns.example.net hostmaster.example.net 7 1 2 3 30"}]}
            """, .aaaa)
        #expect(!nodata.nxdomain)
        #expect(nodata.soa?.description == "example.net. ns.example.net. hostmaster.example.net. 7 1 2 3 30")
        #expect(nodata.negativeTTL == 30)
    }

    /// An SOA that does not read (six fields, a name libknot refuses, no owner) is skipped: the
    /// answer stays negative, without an SOA to pass on; a later one that reads is taken.
    @Test func anSOAThatDoesNotReadIsSkipped() throws {
        let sixFields = try answer(
            """
            {"Status":3,"Authority":[{"name":"example.com.","type":6,"TTL":600,"data":"ns1.example.com. h.example.com. 1 2 3 45"}]}
            """)
        #expect(sixFields.nxdomain)
        #expect(sixFields.soa == nil)
        let laterReads = try answer(
            """
            {"Status":3,"Authority":[{"type":6,"TTL":600,"data":"a. b. 1 2 3 4 5"},
             {"name":"a..b.","type":6,"data":"a. b. 1 2 3 4 5"},{"name":"example.com.","type":6,"data":"a. b. 1 2 3 4 5"}]}
            """)
        #expect(laterReads.soa?.zone == "example.com.")
    }

    @Test func negativeTTLIsCappedBySOARecordTTL() throws {
        let body = """
            {"Status":"3","Authority":[{"name":"example.com.","type":"6","TTL":"20","data":"a. b. 1 2 3 4 900"}]}
            """
        #expect(try answer(body).negativeTTL == 20)
    }

    @Test func noRecordOfAskedTypeIsNODATAWithSOAMinimum() throws {
        let body = """
            {"Status":0,"Answer":[{"name":"www.example.com.","type":5,"TTL":30,"data":"edge.example.net."}],
             "Authority":[{"name":"example.net.","type":6,"TTL":3600,"data":"ns. host. 1 2 3 4 300"}]}
            """
        let result = try answer(body, .aaaa)
        #expect(result.addresses.isEmpty)
        #expect(!result.nxdomain)
        #expect(result.negativeTTL == 300)
    }

    @Test func nxdomainWithoutAuthorityHasNoNegativeTTL() throws {
        let result = try answer(#"{"Status":3}"#)
        #expect(result.nxdomain)
        #expect(result.negativeTTL == nil)
    }

    @Test(arguments: [2, 5, 4, 9])
    func failureStatusIsServerFailureWithRcode(status: Int) {
        guard case .failure(let error) = parse(#"{"Status":\#(status),"Answer":[]}"#) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .serverFailure)
        #expect(error.underlying == status)
    }

    @Test func shortBareArrayGivesAddressesWithoutTTL() throws {
        let result = try answer(#"["192.0.2.10","192.0.2.11","2001:db8::1"]"#)
        #expect(result.addresses == ["192.0.2.10", "192.0.2.11"])
        #expect(result.ttl == nil)
        #expect(result.negativeTTL == nil)
        #expect(!result.nxdomain)
    }

    @Test func emptyShortArrayIsNegativeWithoutNegativeTTL() throws {
        let result = try answer("[]")
        #expect(result.addresses.isEmpty)
        #expect(result.negativeTTL == nil)
        #expect(!result.nxdomain)
    }

    @Test(arguments: ["", "   ", "<html>502</html>", #"{"Status":"zero"}"#, #"{"foo":1}"#, "42", #"[1,2]"#, #"{"Status":0,"Answer":{}}"#])
    func unusableBodiesAreMalformed(body: String) {
        #expect(errorCode(body) == .malformed)
    }

    @Test func invalidAddressDataIsSkipped() throws {
        let body = #"{"Status":0,"Answer":[{"type":1,"TTL":60,"data":"not-an-ip"},{"type":1,"TTL":90,"data":"192.0.2.9"}]}"#
        let result = try answer(body)
        #expect(result.addresses == ["192.0.2.9"])
    }

    @Test func recordsWithoutTTLGiveNilTTL() throws {
        let result = try answer(#"{"Status":0,"Answer":[{"type":1,"data":"192.0.2.9"}]}"#)
        #expect(result.addresses == ["192.0.2.9"])
        #expect(result.ttl == nil)
    }
}
