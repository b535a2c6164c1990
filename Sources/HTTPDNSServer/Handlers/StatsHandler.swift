import HTTPDNSCore

extension HTTPDNSService {
    /// `GET /v1/{account}/stats`: the SDK's `getRequestReportInfo` array (WIRE-FORMATS §4), one
    /// record per (domain, family, network), every key, `avgRtt`/`maxRtt` as strings, plus the
    /// extra keys `staleNum` and `prefetchNum`.
    func stats(_ engine: ResolverEngine) -> HTTPResponse {
        let records = engine.stats.snapshot()
        var writer = JSONWriter(capacity: 320 * records.count + 2)
        writer.raw("[")
        for (index, (key, record)) in records.enumerated() {
            if index > 0 { writer.comma() }
            writer.raw("{")
            writer.key("domain"); writer.string(key.domain); writer.comma()
            writer.key("type"); writer.number(key.family.rawValue); writer.comma()
            writer.key("sp"); writer.string(key.network); writer.comma()
            writer.key("avgRtt"); writer.string(record.avgRtt); writer.comma()
            writer.key("maxRtt"); writer.string(record.maxRtt); writer.comma()
            writer.key("successNum"); writer.number(record.successNum); writer.comma()
            writer.key("cacheDnsNum"); writer.number(record.cacheDnsNum); writer.comma()
            writer.key("requestPDnsNum"); writer.number(record.requestPDnsNum); writer.comma()
            writer.key("gobackLocaldnsNum"); writer.number(record.gobackLocaldnsNum); writer.comma()
            writer.key("localErro"); writer.number(record.localErro); writer.comma()
            writer.key("timeoutErro"); writer.number(record.timeoutErro); writer.comma()
            writer.key("noResponseErro"); writer.number(record.noResponseErro); writer.comma()
            writer.key("noPermissionErro"); writer.number(record.noPermissionErro); writer.comma()
            writer.key("urlParameterErro"); writer.number(record.urlParameterErro); writer.comma()
            writer.key("urlPathErro"); writer.number(record.urlPathErro); writer.comma()
            writer.key("staleNum"); writer.number(record.staleNum); writer.comma()
            writer.key("prefetchNum"); writer.number(record.prefetchNum)
            writer.raw("}")
        }
        writer.raw("]")
        return .json(200, writer)
    }
}
