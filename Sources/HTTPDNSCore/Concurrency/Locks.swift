// Every module that imports HTTPDNSCore takes its locks through HTTPDNSLocks' `withLock` in
// ThreadSanitizer builds (an empty module otherwise).
@_exported import HTTPDNSLocks
