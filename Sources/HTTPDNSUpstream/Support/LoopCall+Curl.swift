import CCurl
import HTTPDNSLoop

extension LoopCall {
    /// Checks a `curl_multi_*` result: anything but `CURLM_OK` is a failure naming the call.
    static func multi(_ code: CURLMcode, _ call: StaticString) throws(Failure) {
        guard code != CURLM_OK else { return }
        throw Failure(call: "\(call)", detail: "\(String(cString: curl_multi_strerror(code))) (CURLMcode \(code.rawValue))")
    }
}
