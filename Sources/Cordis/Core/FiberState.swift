/// Where a fiber is in its lifecycle.
///
/// `active`, `pending`, `failed` and `disposed` are settled states; `loading` and `unloading` are
/// transitions. Every change is emitted as `internal/status`.
public enum FiberState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Waiting for an injected service (or not started yet).
    case pending
    /// Running `apply`.
    case loading
    /// Applied; its effects are in place and the services it provides are available.
    case active
    /// `apply` threw; what it had collected was reverted. `restart()` or `update(config:)` retries it.
    case failed
    /// Reverting its effects, newest first.
    case unloading
    /// Gone for good: every effect reverted, removed from its parent.
    case disposed

    /// Whether no transition is in flight.
    public var isSettled: Bool {
        switch self {
        case .pending, .active, .failed, .disposed: return true
        case .loading, .unloading: return false
        }
    }

    /// The state's name, as printed in logs and status output.
    public var description: String { rawValue }
}
