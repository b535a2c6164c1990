import HTTPDNSCore
import HTTPDNSWire

extension DNSSOARecord {
    /// The SOA a cached negative answer keeps, for the writer.
    init(_ record: NegativeAnswerSOA) {
        self.init(
            zone: record.zone, primary: record.primary, mailbox: record.mailbox, serial: record.serial, refresh: record.refresh,
            retry: record.retry, expire: record.expire, minimum: record.minimum)
    }
}
