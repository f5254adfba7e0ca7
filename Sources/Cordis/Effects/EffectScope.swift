/// The effects a fiber (or a nested effect) collected, reverted newest first when it stops.
///
/// A scope refuses new effects once it starts closing (a fiber in `unloading` accepts nothing new:
/// such effects would leak). Errors thrown by disposers are logged, and the remaining disposers still run.
@CordisActor
public final class EffectScope {
    /// The context whose fiber owns these effects.
    public let ctx: Context
    private var handles: [EffectHandle] = []
    private(set) var isOpen = true

    init(ctx: Context) {
        self.ctx = ctx
    }

    /// Collects a disposer: it runs when the scope closes (the fiber unloads), or when the returned handle
    /// is disposed. The disposer may be synchronous or `async`.
    ///
    /// - Throws: `CordisError` `.inactiveScope` when the scope is closing or closed.
    @discardableResult
    public func collect(_ label: String = "anonymous", _ disposer: @escaping @CordisActor () async throws -> Void) throws -> EffectHandle {
        try ensureOpen()
        let handle = EffectHandle(label: label, body: .disposer(disposer), owner: self)
        handles.append(handle)
        return handle
    }

    /// Runs `body` as a nested effect: what it collects in the scope it receives, plus the disposer it
    /// returns, are reverted together (children newest first, then the returned disposer... in reverse
    /// order of collection). If `body` throws, what it had collected is reverted and the error rethrown.
    @discardableResult
    public func effect(
        _ label: String = "anonymous",
        _ body: @CordisActor (EffectScope) async throws -> (@CordisActor () async throws -> Void)?
    ) async throws -> EffectHandle {
        try ensureOpen()
        let child = EffectScope(ctx: ctx)
        let handle = EffectHandle(label: label, body: .scope(child), owner: self)
        handles.append(handle)
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
            await handle.dispose()
            throw error
        }
        if !isOpen {
            // The scope started closing while the body ran: revert what it made.
            await handle.dispose()
        }
        return handle
    }

    /// The effects collected so far, oldest first.
    public var effects: [EffectSummary] { handles.map(\.summary) }

    /// Whether nothing is collected.
    public var isEmpty: Bool { handles.isEmpty }

    func ensureOpen() throws {
        guard isOpen else {
            throw CordisError(.inactiveScope, "cannot create effect on inactive context")
        }
    }

    func adopt(_ label: String, _ disposer: @escaping @CordisActor () async throws -> Void) throws -> EffectHandle {
        try collect(label, disposer)
    }

    func detach(_ handle: EffectHandle) {
        handles.removeAll { $0 === handle }
    }

    /// Refuses new effects from now on (the fiber is unloading).
    func seal() {
        isOpen = false
    }

    /// Seals the scope and reverts every effect, newest first.
    func close() async {
        isOpen = false
        while let handle = handles.popLast() {
            await handle.run()
        }
    }

    func report(_ error: any Error, in label: String) {
        ctx.fiber.reportDisposerError(error, label: label)
    }
}
