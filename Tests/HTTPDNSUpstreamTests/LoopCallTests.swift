import CCurl
import HTTPDNSLoop
import Testing

@testable import HTTPDNSUpstream

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct LoopCallTests {
    @Test func aMultiCodeOtherThanOKIsAFailureNamingTheCall() {
        let failure = #expect(throws: LoopCall.Failure.self) {
            try LoopCall.multi(CURLM_BAD_HANDLE, "curl_multi_socket_action")
        }
        #expect(failure?.call == "curl_multi_socket_action")
        #expect(failure?.detail.contains("CURLMcode 1") == true)
        #expect(throws: Never.self) { try LoopCall.multi(CURLM_OK, "curl_multi_add_handle") }
    }

    @Test func aSystemCallIsRetriedOnEINTRAndOtherErrorsCarryErrno() throws {
        var calls = 0
        let result = try LoopCall.system("epoll_wait") { () -> Int32 in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7 && calls == 3)
        let failure = #expect(throws: LoopCall.Failure.self) {
            try LoopCall.system("epoll_ctl") { epoll_ctl(-1, EPOLL_CTL_DEL, 0, nil) }
        }
        #expect(failure?.errorNumber == EBADF)
    }
}
