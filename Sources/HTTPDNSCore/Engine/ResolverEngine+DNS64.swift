/// DNS64 (RFC 6147) for accounts with a `dns64Prefix`: an AAAA answer without addresses for a
/// name that exists is replaced by the name's A addresses embedded under the prefix
/// (`DNS64Prefix.synthesized`). It is done where answers leave the engine, from what the cache
/// (or the upstreams) gave for each family, so every wire format answers the same; nothing
/// synthesized is cached, persisted or shared: it is made again from the two cached answers on
/// each lookup. An account without a prefix never gets here (`LookupOptions.synthesizesAAAA`).
extension ResolverEngine {
    /// The cache's answer to an AAAA lookup that found `aaaa` (no addresses), for an account
    /// with a prefix: the synthesized answer when the name's A answer is cached (fresh, or
    /// expired and still served by the account's rules) and has addresses; `aaaa` itself when
    /// the name does not exist or its A answer is cached without addresses; nil when the A
    /// answer is not cached, so that the lookup goes on as a miss (`resolveUncached` then asks
    /// for both families).
    func synthesizedAAAA(_ aaaa: ResolvedAnswer, a key: CacheKey, at now: Timestamp, options: LookupOptions) -> ResolvedAnswer? {
        guard !aaaa.nxdomain, let prefix = config.dns64Prefix else { return aaaa }
        let hit = cache.hit(key, at: now, refreshAhead: options.schedulePrefetchEnable)
        guard let a = answer(hit, at: now, options: options, key: { key }) else { return nil }
        return prefix.synthesized(aaaa: aaaa, a: a) ?? aaaa
    }

    /// `completion` of an AAAA resolution for an account with a prefix: an answer without
    /// addresses for a name that exists is completed once the name's A answer is in (cached,
    /// or asked for as the client's own lookup would), with the synthesized answer when the A
    /// answer has addresses. Anything else completes as it is.
    func dns64(
        _ completion: @escaping @Sendable (FamilyOutcome) -> Void, key: CacheKey, client: ClientID?
    ) -> @Sendable (FamilyOutcome) -> Void {
        { [self] outcome in
            guard case .success(let aaaa) = outcome, aaaa.addressList.isEmpty, !aaaa.nxdomain, let prefix = config.dns64Prefix else {
                return completion(outcome)
            }
            let finish: @Sendable (FamilyOutcome) -> Void = { a in
                guard case .success(let a) = a, let synthesized = prefix.synthesized(aaaa: aaaa, a: a) else {
                    return completion(outcome)
                }
                completion(.success(synthesized))
            }
            if let a = resolve(host: key.host, family: .a, network: key.network, client: client, completion: finish) { finish(a) }
        }
    }
}
