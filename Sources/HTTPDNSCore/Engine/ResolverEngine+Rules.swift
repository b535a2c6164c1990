/// What one of the account's `rules` answered for a (host, family): the answer (source `rule`,
/// TTL the rule's, never cached), the rule's name and its `extra` text.
public struct RuleAnswer: Sendable {
    public var answer: ResolvedAnswer
    public var rule: String
    public var extra: String?
}

extension ResolverEngine {
    /// Whether some rule of the account names `name` (a request's bytes, any ASCII case); read in
    /// place, allocating nothing. Callers ask only when `LookupOptions.hasRules`: a cache hit of
    /// such a name is left to the general path, which asks `ruleAnswer`.
    public func hasRule(for name: UnsafeRawBufferPointer) -> Bool { settings.read { $0.config.rules.covers(name) } }

    public func hasRule(for host: HostName) -> Bool {
        var name = host.value
        return name.withUTF8 { hasRule(for: UnsafeRawBufferPointer($0)) }
    }

    /// The answer of the first rule naming `host` whose conditions `client` meets, counted (the
    /// account's `rule_answers` metric, the rule's own count, the name's `ruleNum`); nil when no
    /// rule answers, and the name is resolved as usual. The addresses of `family` are ordered by
    /// the rule's weights with `random`, less those its health check found dead; a family the
    /// rule has no address for is an empty answer (NODATA), not a resolution.
    public func ruleAnswer<Random: RandomNumberGenerator>(
        host: HostName, family: RecordFamily, client: RuleClient, random: inout Random
    ) -> RuleAnswer? {
        guard let rule = current.config.rules.firstMatch(host: host, client: client) else { return nil }
        let now = clock.now()
        let checked = rule.answer.healthCheckPort != nil
        if checked { checkHealth(of: rule, at: now) }
        let addresses = rule.answer.ordered(family, using: &random) { address in
            !checked || ruleHealth.result(for: address.description, at: now) != .unreachable
        }
        let ttl = rule.answer.ttl
        metrics.countRuleAnswer(rule.name)
        stats.update(StatsKey(CacheKey(host: host, family: family, network: ""))) { $0.ruleNum += 1 }
        return RuleAnswer(
            answer: ResolvedAnswer(addresses: addresses.map(\.description), ttl: ttl, originTTL: ttl, source: .rule),
            rule: rule.name, extra: rule.extra)
    }

    /// Starts a TCP connect to the `healthCheck` port of each of `rule`'s addresses (the speed
    /// test's prober, `speedTestTimeout` each) when the last results are older than 10 s and no
    /// check of the rule is running; the results leave dead addresses out of later answers.
    private func checkHealth(of rule: AnswerRule, at now: Timestamp) {
        guard let speedTester, let port = rule.answer.healthCheckPort else { return }
        let addresses = (rule.answer.ipv4 + rule.answer.ipv6).map(\.description)
        guard ruleHealth.needsProbe(addresses, at: now), ruleChecks.withLock({ $0.insert(rule.name).inserted }) else { return }
        speedTester.probe(addresses, port: Int(port), timeout: current.config.speedTestTimeout) { [self] results in
            ruleHealth.record(results, at: clock.now())
            _ = ruleChecks.withLock { $0.remove(rule.name) }
        }
    }

    /// `ruleAnswer` with the service's random source.
    public func ruleAnswer(host: HostName, family: RecordFamily, client: RuleClient) -> RuleAnswer? {
        var random = RuleRandom()
        return ruleAnswer(host: host, family: family, client: client, random: &random)
    }
}
