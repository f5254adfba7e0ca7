import Cordis

/// What the node holds to carry out the directives of `Exports` and `Proxies`, by provider life or proxy
/// key: fibers, holds, timers and waiting callers. Handles only: what is exported, withdrawn or proxied
/// is `NodeState`'s to say.
struct RemoteHandles {
    /// The provider record of each exported life (its fiber's teardown is held while it is withdrawn).
    var records: [Int: ProviderRecord] = [:]
    /// The hold on the teardown of each provider life being withdrawn.
    var holds: [Int: WithdrawalHold] = [:]
    /// The loop timer of each withdrawal deadline `Exports` armed.
    var deadlines: [Int: UInt64] = [:]
    /// Callers waiting until no withdrawal is in progress.
    var waiters: [CheckedContinuation<Void, Never>] = []
    /// The proxy fiber of each proxy, by member life and provider life.
    var proxies: [Proxies.Key: Fiber] = [:]
}
