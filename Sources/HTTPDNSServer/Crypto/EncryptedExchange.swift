import HTTPDNSCore
import HTTPDNSCrypto

/// One opened encrypted request (docs/encryption.md): what is needed to seal its answer under the
/// account's `aesSecretKey`, bound to the request's method, path and nonce.
struct EncryptedExchange: Sendable {
    let key: [UInt8]
    let method: String
    let path: String
    /// The nonce of the request's `enc`: the answer is bound to it, so an old answer cannot be
    /// replayed as the answer to a new request.
    let requestNonce: [UInt8]

    /// Content type of every sealed answer.
    static let contentType = "application/octet-stream"

    /// The associated data of one part of an exchange:
    /// `httpdns-enc-v1 {part} {METHOD} {path}[ {base64url(request nonce)}]`.
    static func associatedData(_ part: Part, method: String, path: String, requestNonce: [UInt8]?) -> [UInt8] {
        var text = "httpdns-enc-v1 \(part.rawValue) \(method) \(path)"
        if let requestNonce { text += " " + Base64URL.encode(requestNonce) }
        return Array(text.utf8)
    }

    enum Part: String {
        /// The query string, in `enc` (no request nonce: it is this message's own).
        case query
        /// A request body (preload's JSON).
        case body
        /// The answer body, whatever the status.
        case answer
    }

    /// `response` with its body sealed (`nonce || ciphertext || tag`, raw bytes) and the type
    /// `application/octet-stream`; status and headers unchanged. Should sealing fail, a plain 500
    /// without the body: an answer to an encrypted request is never sent in clear.
    func seal(_ response: HTTPResponse) -> HTTPResponse {
        let associatedData = Self.associatedData(.answer, method: method, path: path, requestNonce: requestNonce)
        do {
            let sealed = try AESGCM.seal(response.body, key: key, associatedData: associatedData)
            var answer = HTTPResponse(status: response.status, contentType: Self.contentType, headers: response.headers, body: sealed)
            answer.source = response.source
            return answer
        } catch {
            Log.error("could not encrypt an answer: \(error)")
            return APIError(.internalError, "could not encrypt the answer").response
        }
    }

    /// `result` sealed now, or when the deferred response arrives.
    func seal(_ result: HandlerResult) -> HandlerResult {
        switch result {
        case .response(let response):
            return .response(seal(response))
        case .deferred(let start):
            return .deferred { respond in start { response in respond(self.seal(response)) } }
        }
    }
}
