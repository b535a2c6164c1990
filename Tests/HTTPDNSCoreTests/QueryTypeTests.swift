import HTTPDNSCore
import Testing

@Suite struct QueryTypeTests {
    @Test(arguments: [
        ("A", QueryType.a), ("a", .a), ("1", .a), ("4", .a),
        ("AAAA", .aaaa), ("aaaa", .aaaa), ("28", .aaaa), ("6", .aaaa),
        ("auto", .auto), ("AUTO", .auto), ("", .auto),
        ("both", .both), ("Both", .both), ("4,6", .both), ("a,aaaa", .both), ("A,AAAA", .both),
    ])
    func parameterSpellingsParse(_ text: String, _ expected: QueryType) {
        #expect(QueryType(parameter: text) == expected)
    }

    @Test(arguments: ["MX", "CNAME", "2", "AA", "6,4", " a", "any"])
    func unknownTypesAreRejected(_ text: String) {
        #expect(QueryType(parameter: text) == nil)
    }

    @Test func autoIncludesAAAAOnlyWhenIPv6IsEnabled() {
        #expect(QueryType.auto.families(ipv6Enabled: false) == [.a])
        #expect(QueryType.auto.families(ipv6Enabled: true) == [.a, .aaaa])
    }

    @Test func explicitTypesIgnoreTheIPv6Setting() {
        for enabled in [false, true] {
            #expect(QueryType.a.families(ipv6Enabled: enabled) == [.a])
            #expect(QueryType.aaaa.families(ipv6Enabled: enabled) == [.aaaa])
            #expect(QueryType.both.families(ipv6Enabled: enabled) == [.a, .aaaa])
        }
    }

    @Test func familiesCarryTheirDNSTypeNumbersAndNames() {
        #expect(RecordFamily.a.rawValue == 1)
        #expect(RecordFamily.aaaa.rawValue == 28)
        #expect(RecordFamily.a.typeName == "A")
        #expect(RecordFamily.aaaa.typeName == "AAAA")
    }
}

@Suite struct SingleFamilyTests {
    @Test func singleFamilyAgreesWithFamilies() {
        for type in [QueryType.a, .aaaa, .auto, .both] {
            for enabled in [false, true] {
                let families = type.families(ipv6Enabled: enabled)
                #expect(type.singleFamily(ipv6Enabled: enabled) == (families.count == 1 ? families[0] : nil))
            }
        }
    }
}
