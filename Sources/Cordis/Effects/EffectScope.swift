/// The effects a fiber (or a nested effect) collected, reverted newest first when it stops.
///
/// A scope refuses new effects once it starts closing (a fiber in `unloading` accepts nothing new:
/// such effects would leak). Errors thrown by disposers are logged, and the remaining disposers still run.
@CordisActor
public final class EffectScope {
    /// The context whose fiber owns these effects.
    public let ctx: Context
    /// Collected handles, oldest first; a detached handle leaves a hole (compacted when holes dominate),
    /// so removing one is O(1) however many a scope holds.
    private var handles: [EffectHandle?] = []
    private var holes = 0
    private(set) var isOpen = true
    /// The task running an async effect's body (`ctx.effect(_:_:)`), kept for `ready()`.
    private(set) var body: Task<Void, any Error>?
    /// Whether that body still runs: closing the scope waits for it first.
    private var bodyRunning = false
    /// Whether the scope is closing and waits for its body: what the body collects meanwhile is recorded,
    /// so it is reverted with the rest, and the `collect` then throws to end the body.
    private var aborting = false
    /// Whether the fiber's plugin has provided its own services in this scope already (a
    /// `ServicePlugin` does so before `setup`), so the fiber does not provide them again after `apply`.
    var providesItself = false

    init(ctx: Context) {
        self.ctx = ctx
    }

    /// Collects a disposer: it runs when the scope closes (the fiber unloads), or when the returned handle
    /// is disposed. The disposer may be synchronous or `async`.
    /// A disposer is not an effect of its own: cordis-ios's `getEffects()` does not list it.
    ///
    /// While the scope waits for its async body to end (the effect was reverted while the body ran),
    /// the disposer is still recorded, so it runs with the rest, and then the call throws to end the body.
    ///
    /// - Throws: `CordisError` `.inactiveEffect` when the scope is closing or closed.
    @discardableResult
    public func collect(_ disposer: @escaping @CordisActor () async throws -> Void) throws -> EffectHandle {
        try collect("anonymous", disposer)
    }

    /// Collects a disposer under `label` (shown in `getEffects()` of what adopts it and in logs), as
    /// `collect(_:)` does.
    ///
    /// - Throws: `CordisError` `.inactiveEffect` when the scope is closing or closed.
    @discardableResult
    public func collect(_ label: String, _ disposer: @escaping @CordisActor () async throws -> Void) throws -> EffectHandle {
        try ensureOpenOrAborting()
        let handle = appendDisposer(label, disposer, isEffect: false)
        try ensureNotAborting()
        return handle
    }

    /// Collects a disposer that stands for an effect of its own (a listener, an exporter, a timer): like
    /// `collect(_:)`, but listed by cordis-ios's `getEffects()`.
    ///
    /// - Throws: `CordisError` `.inactiveEffect` when the scope is closing or closed.
    func collectEffect(_ label: String, _ disposer: @escaping @CordisActor () async throws -> Void) throws -> EffectHandle {
        try ensureOpen()
        return appendDisposer(label, disposer, isEffect: true)
    }

    private func appendDisposer(
        _ label: String, _ disposer: @escaping @CordisActor () async throws -> Void, isEffect: Bool
    ) -> EffectHandle {
        let handle = EffectHandle(label: label, body: .disposer(disposer), owner: self)
        handle.isEffect = isEffect
        append(handle)
        return handle
    }

    /// Adopts `handle`, an effect made elsewhere (the handle `ctx.on` returns, say), as cordis-ios's
    /// `collect(_: EffectHandle)` does: it leaves the scope that held it and is reverted with this scope,
    /// listed among its effects. Adopting a handle this scope holds, or one already reverted, does
    /// nothing.
    ///
    /// - Throws: `CordisError` `.inactiveEffect` when the scope is closing or closed (the handle stays
    ///   where it was).
    public func collect(_ handle: EffectHandle) throws {
        try ensureOpenOrAborting()
        guard handle.owner !== self, !handle.isDisposed else { return }
        handle.owner?.detach(handle)
        handle.owner = self
        append(handle)
        try ensureNotAborting()
    }

    /// Collects a disposer that neither waits nor throws; the scope reverts it without an `await`.
    ///
    /// - Throws: `CordisError` `.inactiveEffect` when the scope is closing or closed.
    func collectImmediate(_ label: String, _ disposer: @escaping @CordisActor () -> Void) throws -> EffectHandle {
        try ensureOpen()
        let handle = EffectHandle(label: label, body: .immediate(disposer), owner: self)
        append(handle)
        return handle
    }

    /// Collects a pending timeout of `queue` whose id `schedule` returns: `schedule` receives the handle
    /// first (the timer's action uses it), so the timer is scheduled only once the effect is collected.
    /// Reverting the effect cancels the timer, without an `await`.
    ///
    /// - Throws: `CordisError` `.inactiveEffect` when the scope is closing or closed (nothing is scheduled).
    func collectTimer(
        _ label: String, in queue: TimerQueue, _ schedule: (EffectHandle) -> UInt64
    ) throws -> EffectHandle {
        try ensureOpen()
        let handle = EffectHandle(label: label, body: .timer(queue, 0), owner: self)
        handle.body = .timer(queue, schedule(handle))
        append(handle)
        return handle
    }

    /// Runs `body` (synchronous or `async`) as a nested effect: what it collects in the scope it
    /// receives and the disposer it returns are reverted together, newest first (the returned disposer
    /// first). If `body` throws, what it had collected is reverted and the error rethrown.
    /// If this scope closes while `body` is suspended, what it had collected is reverted then, its later
    /// `collect` calls throw `cannot create effect on inactive context`, and a disposer it still returns
    /// runs as soon as it returns.
    @discardableResult
    public func effect(
        _ label: String = "anonymous",
        _ body: @CordisActor (EffectScope) async throws -> (@CordisActor () async throws -> Void)?
    ) async throws -> EffectHandle {
        try ensureOpen()
        let child = EffectScope(ctx: ctx)
        let handle = EffectHandle(label: label, body: .scope(child), owner: self)
        append(handle)
        do {
            if let disposer = try await body(child) {
                if child.isOpen {
                    try child.collect(label, disposer)
                } else {
                    // The effect was reverted while its body ran (its owner closed): the disposer it
                    // returned has nowhere to go, so it runs now instead of leaking.
                    do { try await disposer() } catch { report(error, in: label) }
                }
            }
        } catch {
            await handle.revert()
            throw error
        }
        if !isOpen {
            // The scope started closing while the body ran: revert what it made.
            await handle.revert()
        }
        return handle
    }

    /// A nested scope collected as one effect labelled `label` (what `effect` does, for bodies that run
    /// outside it).
    func nested(_ label: String) throws -> (handle: EffectHandle, scope: EffectScope) {
        try ensureOpen()
        let child = EffectScope(ctx: ctx)
        let handle = EffectHandle(label: label, body: .scope(child), owner: self)
        append(handle)
        return (handle, child)
    }

    /// The effects collected so far, oldest first.
    public var effects: [EffectMeta] { handles.compactMap { $0?.fullMeta } }

    /// The effects collected so far that are effects of their own (cordis-ios's `getEffects()`): nested
    /// effects, listeners, providers, adopted handles; not the disposers collected with `collect(_:)`.
    var listedEffects: [EffectMeta] {
        handles.compactMap { handle in
            guard let handle, handle.isEffect else { return nil }
            return handle.meta
        }
    }

    /// Runs `body` as this scope's async body (`ctx.effect(_:_:)`): closing the scope waits for it.
    func startBody(_ body: Task<Void, any Error>) {
        self.body = body
        bodyRunning = true
    }

    /// The async body has ended (returned, thrown, or stopped at a `collect`).
    func bodyEnded() {
        bodyRunning = false
    }

    /// Whether nothing is collected.
    public var isEmpty: Bool { handles.count == holes }

    private func append(_ handle: EffectHandle) {
        handle.position = handles.count
        handles.append(handle)
    }

    func ensureOpen() throws {
        guard isOpen else { throw Self.inactive }
    }

    private func ensureOpenOrAborting() throws {
        guard isOpen || aborting else { throw Self.inactive }
    }

    private func ensureNotAborting() throws {
        if aborting { throw Self.inactive }
    }

    private static var inactive: CordisError {
        CordisError(.inactiveEffect, "cannot create effect on inactive context")
    }

    func detach(_ handle: EffectHandle) {
        guard let position = handle.position, position < handles.count, handles[position] === handle else { return }
        handles[position] = nil
        handle.position = nil
        holes += 1
        if holes > 64, holes * 2 > handles.count { compact() }
    }

    private func compact() {
        handles = handles.filter { $0 != nil }
        holes = 0
        for (index, handle) in handles.enumerated() { handle?.position = index }
    }

    /// Refuses new effects from now on (the fiber is unloading).
    func seal() {
        isOpen = false
    }

    /// Seals the scope, waits for its async body if it still runs (what the body collects meanwhile is
    /// recorded, then its `collect` throws), and reverts every effect, newest first; returns the first
    /// error a disposer threw (each is logged).
    @discardableResult
    func close() async -> (any Error)? {
        isOpen = false
        var firstError: (any Error)?
        if bodyRunning, let body {
            aborting = true
            _ = await body.result
            aborting = false
        }
        while let last = handles.popLast() {
            guard let handle = last else {
                holes -= 1
                continue
            }
            handle.position = nil
            if handle.runImmediately() { continue }
            if let error = await handle.run(), firstError == nil { firstError = error }
        }
        return firstError
    }

    func report(_ error: any Error, in label: String) {
        ctx.fiber.reportDisposerError(error, label: label)
    }
}
