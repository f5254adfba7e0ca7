/// One collected effect: a disposer, or a nested scope of effects.
///
/// Disposing a handle runs it once (later calls do nothing) and removes it from its scope.
@CordisActor
public final class EffectHandle {
    enum Body {
        case disposer(@CordisActor () async throws -> Void)
        /// A disposer that neither waits nor throws: reverted without an `await`.
        case immediate(@CordisActor () -> Void)
        /// A pending timer of the world's queue (a timeout): reverting it cancels the timer, without an
        /// `await` and without a disposer closure or a timer object of its own to allocate and free.
        case timer(TimerQueue, UInt64)
        case scope(EffectScope)
    }

    /// The label shown in `effects` listings.
    public let label: String
    var body: Body?
    weak var owner: EffectScope?
    /// Where the handle sits in its owner's list.
    var position: Int?
    /// Whether the handle is an effect of its own, listed by cordis-ios's `getEffects()`; false for a
    /// disposer collected with `collect(_:)` and for a child fiber's hold.
    var isEffect = true

    init(label: String, body: Body, owner: EffectScope) {
        self.label = label
        self.body = body
        self.owner = owner
    }

    /// Whether the effect has been reverted.
    public var isDisposed: Bool { body == nil }

    /// Waits for the body of an async effect (`ctx.effect(_:_:)`) to finish and rethrows its error;
    /// returns at once for other effects, and for one already reverted (cordis-ios's `ready()`).
    public func ready() async throws {
        if case .scope(let scope)? = body { try await scope.body?.value }
    }

    /// Reverts the effect now, out of order, and forgets it (cordis-ios's `dispose()`): every disposer
    /// runs, newest first, each error is logged, and the first one is rethrown once all have run. A
    /// second call does nothing.
    ///
    /// - Throws: the first error a disposer threw.
    public func dispose() async throws {
        owner?.detach(self)
        if let error = await run() { throw error }
    }

    /// Reverts the effect now and forgets it, as `dispose()` does, for the runtime's own use: a
    /// disposer's error is logged only.
    func revert() async {
        owner?.detach(self)
        await run()
    }

    /// Reverts the effect now if its disposer is immediate (true), without suspending; false otherwise.
    func runImmediately() -> Bool {
        switch body {
        case .immediate(let disposer)?:
            body = nil
            disposer()
        case .timer(let queue, let id)?:
            body = nil
            queue.cancel(id)
        default:
            return false
        }
        return true
    }

    /// Forgets the effect without reverting it (used when a child fiber disposes itself).
    func detach() {
        owner?.detach(self)
        body = nil
    }

    /// Reverts the effect (once); returns the first error a disposer threw, each one logged.
    @discardableResult
    func run() async -> (any Error)? {
        guard let body else { return nil }
        self.body = nil
        switch body {
        case .disposer(let disposer):
            do {
                try await disposer()
            } catch {
                owner?.report(error, in: label)
                return error
            }
        case .immediate(let disposer):
            disposer()
        case .timer(let queue, let id):
            queue.cancel(id)
        case .scope(let scope):
            return await scope.close()
        }
        return nil
    }

    /// The effect's label and, for a nested scope, its children that are effects of their own (what
    /// `fiber.getEffects()` lists: not the disposers collected with `collect`).
    public var meta: EffectMeta {
        if case .scope(let scope)? = body { return EffectMeta(label: label, children: scope.listedEffects) }
        return EffectMeta(label: label, children: [])
    }

    /// The effect's label and, for a nested scope, every child: collected disposers too.
    var fullMeta: EffectMeta {
        if case .scope(let scope)? = body { return EffectMeta(label: label, children: scope.effects) }
        return EffectMeta(label: label, children: [])
    }

    /// The effect's label and, for a nested scope, every child, collected disposers too.
    @available(*, deprecated, message: "read meta (its own effects), or fiber.effects for every child")
    public var summary: EffectMeta { fullMeta }
}

/// A description of a live effect (`fiber.getEffects()`, `handle.meta`), for inspection and tests.
public struct EffectMeta: Sendable, Hashable {
    /// The effect's label.
    public let label: String
    /// Its nested effects, oldest first.
    public var children: [EffectMeta]

    /// Describes an effect.
    public init(label: String, children: [EffectMeta] = []) {
        self.label = label
        self.children = children
    }
}

/// The earlier name of `EffectMeta`.
@available(*, deprecated, renamed: "EffectMeta")
public typealias EffectSummary = EffectMeta
