import COpenSSL

/// AES-256-GCM through OpenSSL's EVP AEAD interface (`EVP_aes_256_gcm`), for encrypted client
/// requests and answers. A sealed message is `nonce (12 bytes) || ciphertext || tag (16 bytes)`;
/// the nonce is fresh from `RAND_bytes` for every message. Every libcrypto result goes through
/// `CryptoError.check`; every cipher context is freed before the call returns.
public enum AESGCM {
    /// Key length, bytes (AES-256).
    public static let keyCount = 32
    /// Nonce length, bytes (the 96-bit IV GCM is defined for).
    public static let nonceCount = 12
    /// Tag length, bytes (the full 128-bit GCM tag).
    public static let tagCount = 16

    /// Encrypts `plaintext` under `key` (32 bytes) with a random nonce, authenticating
    /// `associatedData` too (it is not part of the output: the opener must supply the same).
    public static func seal(_ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: nonceCount)
        let result = nonce.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(nonceCount)) }
        try CryptoError.check(result == 1, "RAND_bytes")
        return try seal(plaintext, key: key, nonce: nonce, associatedData: associatedData)
    }

    /// `seal` with a given nonce: for known-answer tests only. A nonce must never be used twice
    /// under one key.
    static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]) throws(CryptoError) -> [UInt8] {
        try checkSizes(key: key, nonce: nonce, plaintext.count, associatedData.count, operation: "AES-256-GCM seal")
        let context = try newContext("AES-256-GCM seal")
        defer { EVP_CIPHER_CTX_free(context) }
        try CryptoError.check(EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1, "EVP_EncryptInit_ex (cipher)")
        try CryptoError.check(
            EVP_CIPHER_CTX_ctrl(context, chttpdns_gcm_set_ivlen, Int32(nonceCount), nil) == 1, "EVP_CTRL_GCM_SET_IVLEN")
        try CryptoError.check(EVP_EncryptInit_ex(context, nil, nil, key, nonce) == 1, "EVP_EncryptInit_ex (key, nonce)")
        var written: Int32 = 0
        if !associatedData.isEmpty {
            try CryptoError.check(
                EVP_EncryptUpdate(context, nil, &written, associatedData, Int32(associatedData.count)) == 1,
                "EVP_EncryptUpdate (associated data)")
        }
        // GCM is a stream mode: the ciphertext is as long as the plaintext, Final adds nothing.
        var output = nonce + [UInt8](repeating: 0, count: plaintext.count + tagCount)
        var produced = 0
        try output.withUnsafeMutableBufferPointer { buffer throws(CryptoError) in
            let ciphertext = buffer.baseAddress! + nonceCount
            if !plaintext.isEmpty {
                try CryptoError.check(
                    EVP_EncryptUpdate(context, ciphertext, &written, plaintext, Int32(plaintext.count)) == 1, "EVP_EncryptUpdate")
                produced = Int(written)
            }
            try CryptoError.check(EVP_EncryptFinal_ex(context, ciphertext + produced, &written) == 1, "EVP_EncryptFinal_ex")
            produced += Int(written)
            try CryptoError.check(produced == plaintext.count, "AES-256-GCM seal (ciphertext length)")
            try CryptoError.check(
                EVP_CIPHER_CTX_ctrl(context, chttpdns_gcm_get_tag, Int32(tagCount), ciphertext + produced) == 1,
                "EVP_CTRL_GCM_GET_TAG")
        }
        return output
    }

    /// Decrypts a `nonce || ciphertext || tag` message sealed under `key` with the same
    /// `associatedData`. Throws when the message is too short or its tag does not verify (any
    /// changed byte, another key or other associated data); no plaintext is returned then.
    public static func open(_ sealed: [UInt8], key: [UInt8], associatedData: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        guard sealed.count >= nonceCount + tagCount else {
            throw CryptoError("AES-256-GCM open", reason: "message shorter than a nonce and a tag (\(sealed.count) bytes)")
        }
        let nonce = Array(sealed[0..<nonceCount])
        let ciphertext = Array(sealed[nonceCount..<(sealed.count - tagCount)])
        var tag = Array(sealed[(sealed.count - tagCount)...])
        try checkSizes(key: key, nonce: nonce, ciphertext.count, associatedData.count, operation: "AES-256-GCM open")
        let context = try newContext("AES-256-GCM open")
        defer { EVP_CIPHER_CTX_free(context) }
        try CryptoError.check(EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1, "EVP_DecryptInit_ex (cipher)")
        try CryptoError.check(
            EVP_CIPHER_CTX_ctrl(context, chttpdns_gcm_set_ivlen, Int32(nonceCount), nil) == 1, "EVP_CTRL_GCM_SET_IVLEN")
        try CryptoError.check(EVP_DecryptInit_ex(context, nil, nil, key, nonce) == 1, "EVP_DecryptInit_ex (key, nonce)")
        var written: Int32 = 0
        if !associatedData.isEmpty {
            try CryptoError.check(
                EVP_DecryptUpdate(context, nil, &written, associatedData, Int32(associatedData.count)) == 1,
                "EVP_DecryptUpdate (associated data)")
        }
        try CryptoError.check(EVP_CIPHER_CTX_ctrl(context, chttpdns_gcm_set_tag, Int32(tagCount), &tag) == 1, "EVP_CTRL_GCM_SET_TAG")
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 1)
        var produced = 0
        try plaintext.withUnsafeMutableBufferPointer { buffer throws(CryptoError) in
            if !ciphertext.isEmpty {
                try CryptoError.check(
                    EVP_DecryptUpdate(context, buffer.baseAddress, &written, ciphertext, Int32(ciphertext.count)) == 1,
                    "EVP_DecryptUpdate")
                produced = Int(written)
            }
            // The tag is verified here: 0 means the message, the key or the associated data differ.
            try CryptoError.check(
                EVP_DecryptFinal_ex(context, buffer.baseAddress! + produced, &written) == 1,
                "AES-256-GCM open (tag verification)")
            produced += Int(written)
        }
        return Array(plaintext.prefix(produced))
    }

    private static func newContext(_ operation: String) throws(CryptoError) -> OpaquePointer {
        let context = EVP_CIPHER_CTX_new()
        try CryptoError.check(context != nil, "EVP_CIPHER_CTX_new (\(operation))")
        return context!
    }

    private static func checkSizes(key: [UInt8], nonce: [UInt8], _ textCount: Int, _ associatedCount: Int, operation: String)
        throws(CryptoError)
    {
        guard key.count == keyCount else {
            throw CryptoError(operation, reason: "the key has \(key.count) bytes, AES-256 needs \(keyCount)")
        }
        guard nonce.count == nonceCount else {
            throw CryptoError(operation, reason: "the nonce has \(nonce.count) bytes, \(nonceCount) are used")
        }
        guard textCount < Int(Int32.max) - tagCount, associatedCount < Int(Int32.max) else {
            throw CryptoError(operation, reason: "message longer than 2 GiB")
        }
    }
}
