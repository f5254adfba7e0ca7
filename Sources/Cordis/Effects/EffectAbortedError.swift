/// Ends an effect's or a plugin's body early without failing it (cordis-ios's `EffectAbortedError`).
///
/// Throwing it from an async `ctx.effect` body or from a plugin's `apply` stops the body where it is:
/// what it collected stays until the effect or the fiber is reverted, nothing is logged, `ready()` does
/// not throw and the fiber does not fail. The async `ctx.effect` body treats the error of a `collect`
/// made after its effect was reverted (`CordisError` `.inactiveEffect`) the same way, as cordis-ios does
/// for its aborted bodies.
public struct EffectAbortedError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Creates the error.
    public init() {}

    /// `effect aborted`.
    public var description: String { "effect aborted" }
}
