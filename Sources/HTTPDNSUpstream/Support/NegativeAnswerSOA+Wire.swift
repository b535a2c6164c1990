import HTTPDNSCore
import HTTPDNSWire

extension NegativeAnswerSOA {
    /// The record as the wire layer read it. Nil only if a name is not one libknot writes
    /// (`NegativeAnswerSOA.isName`), which the wire layer never returns.
    convenience init?(_ record: DNSSOARecord) {
        self.init(
            zone: record.zone, primary: record.primary, mailbox: record.mailbox, serial: record.serial, refresh: record.refresh,
            retry: record.retry, expire: record.expire, minimum: record.minimum)
    }
}
