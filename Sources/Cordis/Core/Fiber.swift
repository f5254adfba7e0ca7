/// One running instance of a plugin: its state, its effects, the services it injects and provides.
///
/// A fiber runs only while every service it injects is provided; it reloads when a provider changes,
/// unloads to `pending` when one goes away, and reverts every effect when it stops. One transition
/// runs at a time: a change that arrives meanwhile is applied when the transition ends. That includes
/// a request the fiber makes of itself from the code its transition runs (its `apply`, its disposers,
/// the listeners they call): `dispose()`, `restart()` and `update(config:)` then return at once, and
/// the fiber disposes, restarts or reloads with the new config as soon as the transition is over.
/// All members are isolated to `CordisActor`.
@CordisActor
public final class Fiber {
    /// Why a fiber is being disposed.
    public enum DisposeReason: Sendable, Hashable {
        /// `dispose()` was called on it (by itself or by user code).
        case explicit
        /// Its parent fiber unloaded, or the owner of the plugin tree removed it.
        case parent
    }

    /// A number unique in the plugin world, in creation order (the root fiber is 0).
    public let id: Int
    /// The plugin's name (`root` for the root fiber).
    public let name: String
    /// Where the fiber is in its lifecycle.
    public private(set) var state: FiberState
    /// The error that made it `failed`, if it is.
    public private(set) var error: (any Error)?
    /// The context it was started from (nil for the root fiber): cordis-ios's `parent` reads it, and
    /// its fiber is `parentFiber`. `rehome(under:)` changes it.
    private(set) var startedFrom: Context?
    /// The fiber that created it, the fiber of the context it was started from (nil for the root fiber).
    @available(*, deprecated, message: "read parent.fiber: parent is the context the fiber was started from")
    public var parentFiber: Fiber? { startedFromFiber }

    /// The fiber of the context it was started from; nil for the root fiber.
    var startedFromFiber: Fiber? { startedFrom?.fiber }
    /// Why it was disposed, once it is.
    public private(set) var disposeReason: DisposeReason?

    let world: World
    var runner: PluginRunner
    private var strongContext: Context?
    private weak var weakContext: Context?
    /// The scope of the current life (loading or active), nil otherwise.
    private(set) var scope: EffectScope?
    /// The providers pinned for the current life, in the order of the fiber's dependencies.
    private(set) var resolved: [Target.Pin] = []
    private var failedTarget: Target?
    /// The load that failed with `withdrawn` while its providers stayed registered, while the fiber waits
    /// in `pending` to try them again (see `WithdrawnLoad`).
    private var withdrawnLoad: WithdrawnLoad?
    private var instance: AnyObject?
    private var wantsDispose = false
    private var wantsRestart = false
    private(set) var isDriving = false
    /// The serial number of the transition in flight (nil between transitions); see `TransitionMark`.
    private var runningTransition: Int?
    private var transitionSerial = 0
    private var settleWaiters: [CheckedContinuation<Void, Never>] = []
    /// How many services this fiber provides are held by loaded consumers now: one per injected
    /// service resolved to this fiber (a consumer of two of its services counts twice). Each load adds
    /// its pins and `releaseProviders()` takes the same pins away, once, so a count is all the
    /// withdrawal needs (no set of ids to hash per consumer: 100,000 consumers load in linear time).
    private var consumerPins = 0
    private var consumerWaiters: [CheckedContinuation<Void, Never>] = []
    /// The providers this fiber registered (so their slots refresh when its state changes).
    var records: [ProviderRecord] = []
    /// The handle under which its parent holds it; detached when the fiber disposes itself.
    var parentHandle: EffectHandle?
    /// Extra holds on this fiber's withdrawal (remote consumers), released by their tokens.
    private var withdrawalHolds: [Int: String] = [:]
    private var nextHoldID = 0
    /// Structured fields added to every record its loggers write (the Loader sets `CORDIS_ENTRY`);
    /// child fibers inherit them.
    public internal(set) var logFields: [(key: String, value: String)] = []
    /// Observers told when the fiber is disposed (the Loader uses this).
    var onDispose: [(Fiber, DisposeReason) -> Void] = []

    /// The task `inertia` handed out for the transitions in flight, dropped when they end.
    var inertiaTask: Task<Void, Never>?

    /// Creates a fiber started from the context `parent` (nil for a world's root fiber).
    /// A fiber of an unnamed function plugin takes the name of the fiber it is started from.
    init(id: Int, world: World, runner: PluginRunner, parent: Context?, state: FiberState) {
        self.id = id
        self.name = runner.name == PluginRunner.unnamed ? (parent?.fiber.name ?? "root") : runner.name
        self.world = world
        self.runner = runner
        self.startedFrom = parent
        self.state = state
    }

    /// The context the fiber's plugin sees as `ctx`.
    public var ctx: Context {
        if let strongContext { return strongContext }
        if let weakContext { return weakContext }
        // Only reachable for the root fiber after its Context was released.
        let context = Context(fiber: self, realms: [:])
        weakContext = context
        return context
    }

    /// The scope effects go to now.
    ///
    /// - Throws: `cannot create effect on inactive context` unless the fiber is loading or active.
    func openScope() throws -> EffectScope {
        guard let scope, scope.isOpen, state == .loading || state == .active else {
            throw CordisError(.inactiveEffect, "cannot create effect on inactive context")
        }
        return scope
    }

    /// Moves the fiber, running as it is, under `context`'s fiber: the fiber becomes one of that fiber's
    /// effects (disposing that fiber disposes it) and `context` its `parent`, as if started there. The
    /// Loader uses it when an entry moves to another group, or to hold a fiber while its group changes.
    ///
    /// - Throws: `CordisError` `.inactiveEffect` when `context`'s fiber is neither loading nor active;
    ///   nothing changes then.
    func rehome(under context: Context) throws {
        guard let parentHandle, startedFrom !== context else { return }
        try context.fiber.openScope().collect(parentHandle)
        startedFrom = context
        strongContext?.parent = context
    }

    /// Gives the root fiber its first life.
    func beginRootLife() {
        scope = EffectScope(ctx: ctx)
    }

    /// Whether this is the root fiber of its world (cordis-ios's `isRoot`): always `active`; disposing it
    /// reverts what it holds and starts it afresh.
    public var isRoot: Bool { startedFrom == nil && id == 0 }

    func attach(context: Context, strongly: Bool) {
        if strongly { strongContext = context } else { weakContext = context }
    }

    /// The services it injects.
    @available(*, deprecated, message: "read inject (the injected services) or missingInjections")
    public var dependencies: [Dependency] { declaredDependencies }

    /// The services it injects, optional ones marked.
    package var declaredDependencies: [Dependency] { runner.dependencies }

    /// The required services that are not provided now (what a `pending` fiber waits for).
    @available(*, deprecated, renamed: "missingInjections")
    public var missing: [String] { missingInjections }

    /// The provider in use for each injected service, while loaded.
    @available(*, deprecated, message: "read store (the provider in use for each service, as an Impl)")
    public var providers: [String: ProviderRecord] { providerRecords }

    /// The provider in use for each injected service, while loaded.
    package var providerRecords: [String: ProviderRecord] {
        Dictionary(resolved.map { ($0.service, $0.record) }, uniquingKeysWith: { first, _ in first })
    }

    /// The provider pinned for `service` in the current life, if any.
    func pinned(_ service: String) -> ProviderRecord? {
        resolved.first { $0.service == service }?.record
    }

    /// The services this fiber provides now, with their realms.
    @available(*, deprecated, message: "read store (it lists the services the fiber provides) or ctx.reflect.store")
    public var provided: [ServiceSlot] { providedSlots }

    /// The services this fiber provides now, with their realms.
    package var providedSlots: [ServiceSlot] { records.map(\.slot) }

    /// The effects of its current life, oldest first.
    public var effects: [EffectMeta] { scope?.effects ?? [] }

    /// The plugin's config: a value of its config type (never nil here; optional as in cordis-ios).
    public var config: Any? { runner.config }

    /// The plugin instance while the fiber is loaded (for plugin types), nil otherwise.
    public var plugin: AnyObject? { instance }

    /// Whether no transition is in flight or scheduled.
    @available(*, deprecated, message: "inertia == nil, or await the fiber with await()")
    public var isSettled: Bool { !isDriving }

    func slot(for service: String) -> ServiceSlot {
        ServiceSlot(name: service, realm: ctx.realm(for: service))
    }

    // MARK: - Public lifecycle

    /// Waits until the fiber is settled (no transition in flight) and returns it.
    ///
    /// - Throws: the fiber's error if it settled in `failed`.
    @discardableResult
    public func await() async throws -> Fiber {
        await settled()
        if state == .failed, let error { throw error }
        return self
    }

    /// Stops the fiber for good: unloads it if loaded (consumers first, then its effects newest first)
    /// and waits until it is `disposed`. Disposing twice does nothing more.
    ///
    /// Called from the fiber's own transition (its `apply`, a disposer, a listener they await), it
    /// returns at once and the fiber disposes itself when that transition ends.
    public func dispose() async throws {
        await dispose(reason: .explicit)
    }

    /// Unloads and loads the fiber again; recovers a `failed` fiber. Waits until it is settled.
    ///
    /// Called from the fiber's own transition, it returns at once: the fiber restarts once, when that
    /// transition ends.
    /// - Throws: `CordisError` `.disposed` if the fiber is disposed; the new error if it fails again.
    public func restart() async throws {
        try ensureNotDisposed()
        error = nil
        endWithdrawnLoad()
        wantsRestart = true
        schedule()
        if isInsideOwnTransition { return }
        try await self.await()
    }

    /// Replaces the plugin's config and restarts the fiber with it; recovers a `failed` fiber.
    ///
    /// The config is validated first: an invalid one throws and changes nothing. Emits `internal/update`.
    /// Called from the fiber's own transition, it returns once the config is replaced: the fiber
    /// reloads with it once, when that transition ends.
    /// - Throws: `CordisError` `.invalidConfig` or `.typeMismatch`; the new error if the fiber fails again.
    @available(*, deprecated, renamed: "update(_:noSave:)")
    public func update(config: Any) async throws {
        try await update(reconfiguring: config)
    }

    /// Replaces the config with `config`, a value of the plugin's config type or raw JSON.
    func update(reconfiguring config: Any) async throws {
        try ensureNotDisposed()
        try await replaceRunner(with: runner.reconfigured(config))
    }

    /// Replaces the plugin's config from JSON (decoded strictly) and restarts the fiber with it.
    ///
    /// - Throws: `CordisError` `.invalidConfig` naming the path of each problem; nothing changes then.
    @available(*, deprecated, renamed: "update(_:noSave:)")
    public func update(json: JSONValue) async throws {
        try ensureNotDisposed()
        try await replaceRunner(with: runner.reconfigured(json: json))
    }

    /// Runs the `UpdateEvent` waterfall listeners that watch this fiber (its own, and global ones) with
    /// the new config; when they all call `next`, the runner is replaced and the fiber restarts. A
    /// listener that does not call `next` vetoes the update: nothing changes.
    func replaceRunner(with reconfigured: PluginRunner, noSave: Bool = false) async throws {
        let listeners = world.events.snapshot(UpdateEvent.name, .all).filter { listener in
            listener.global || listener.context?.fiber === self
        }.compactMap { $0.body as? WaterfallListener<UpdateEvent.Args, Void> }
        try await runWaterfall(listeners, (fiber: self, config: reconfigured.config, noSave: noSave)) {
            self.runner = reconfigured
            try await self.afterUpdate(noSave: noSave)
        }
    }

    func afterUpdate(noSave: Bool = false) async throws {
        world.events.emitInternal(.configReplaced, FiberUpdate(fiber: self, noSave: noSave))
        try await restart()
    }

    func dispose(reason: DisposeReason) async {
        guard state != .disposed else { return }
        if isRoot {
            // The root never goes away: disposing it reverts everything it holds and starts afresh.
            let old = scope
            scope = EffectScope(ctx: ctx)
            await old?.close()
            return
        }
        if disposeReason == nil { disposeReason = reason }
        wantsDispose = true
        schedule()
        // Waiting from inside the fiber's own transition would wait for itself for ever.
        if isInsideOwnTransition { return }
        await settled()
    }

    /// Whether the current task runs code of this fiber's transition in flight (or was started by it):
    /// a request from there is applied when the transition ends, and must not wait for it.
    private var isInsideOwnTransition: Bool {
        guard let mark = TransitionMark.current, let running = runningTransition else { return false }
        return mark.fiber == ObjectIdentifier(self) && mark.serial == running
    }

    func ensureNotDisposed() throws {
        if state == .disposed || wantsDispose {
            throw CordisError(.disposed, "fiber \(id) (\(name)) is disposed")
        }
    }

    // MARK: - Scheduling

    /// Asks the fiber to re-evaluate its target; starts its driver if it is idle.
    func schedule() {
        guard state != .disposed, !isDriving else { return }
        isDriving = true
        world.startDriver(of: self)
    }

    func settled() async {
        guard isDriving else { return }
        await withCheckedContinuation { settleWaiters.append($0) }
    }

    /// Runs transitions until the fiber's target is reached; started by `World`'s run queue.
    func drive() async {
        // Bounded: every iteration performs a transition or ends; transitions are finite, and a
        // fiber whose target keeps changing keeps following it, one transition at a time.
        while let step = nextStep() {
            transitionSerial &+= 1
            let mark = TransitionMark(fiber: ObjectIdentifier(self), serial: transitionSerial)
            runningTransition = mark.serial
            await TransitionMark.$current.withValue(mark) {
                switch step {
                case .load(let target): await load(target)
                case .unload(let final): await unload(to: final)
                case .reset: setState(.pending)
                case .finalize: finalize()
                }
            }
            runningTransition = nil
        }
        isDriving = false
        inertiaTask = nil
        let waiters = settleWaiters
        settleWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
        world.driverFinished()
    }

    private enum Step {
        case load(Target)
        case unload(FiberState)
        case reset
        case finalize
    }

    /// The providers a fiber would use now, in the order of its dependencies (an optional one that is
    /// not provided is left out); nil when a required one is missing. A fiber has a handful of
    /// dependencies at most, so a list, not a dictionary: no hashing, one allocation.
    struct Target: Equatable {
        /// One injected service and the provider it resolves to.
        struct Pin {
            var service: String
            var record: ProviderRecord
        }

        var records: [Pin]

        /// The same services resolving to the same provider fibers (a provider fiber that provides
        /// again keeps its consumers).
        static func == (lhs: Target, rhs: Target) -> Bool {
            lhs.records.count == rhs.records.count
                && zip(lhs.records, rhs.records).allSatisfy { $0.service == $1.service && $0.record.fiber === $1.record.fiber }
        }
    }

    private func currentTarget() -> Target? {
        let dependencies = runner.dependencies
        var records: [Target.Pin] = []
        records.reserveCapacity(dependencies.count)
        for dependency in dependencies {
            if let record = world.registry.current(slot(for: dependency.name)) {
                records.append(Target.Pin(service: dependency.name, record: record))
            } else if !dependency.optional {
                return nil
            }
        }
        return Target(records: records)
    }

    private func nextStep() -> Step? {
        if wantsDispose {
            switch state {
            case .active: return .unload(.disposed)
            case .pending, .failed: return .finalize
            case .loading, .unloading, .disposed: return nil
            }
        }
        let target = currentTarget()
        switch state {
        case .pending:
            wantsRestart = false
            guard let target else {
                noteDependencyCycle()
                return nil
            }
            world.forgetReportedCycle(of: self)
            return waitsForRetry(target) ? nil : .load(target)
        case .active:
            if !staysActive(with: target) { return .unload(.pending) }
            // Same provider fibers (a target is the set of provider fibers), but a provider may have
            // re-provided another value meanwhile: serve the current records without reloading.
            if let target { resolved = target.records }
            return nil
        case .failed:
            if wantsRestart || target != failedTarget { return .reset }
            return nil
        case .loading, .unloading, .disposed:
            return nil
        }
    }

    /// Whether loading `target` waits for a retry: the providers whose calls failed with `withdrawn` are
    /// tried again when the retry is due, other providers at once.
    private func waitsForRetry(_ target: Target) -> Bool {
        guard let withdrawnLoad else { return false }
        return !withdrawnLoad.isDue && withdrawnLoad.isSame(as: target)
    }

    /// Whether a loaded fiber keeps its load with the providers `target` resolves to: no restart is
    /// wanted and they are the provider fibers it loaded with.
    private func staysActive(with target: Target?) -> Bool {
        !wantsRestart && target == Target(records: resolved)
    }

    // MARK: - Transitions

    private func load(_ target: Target) async {
        setState(.loading)
        resolved = target.records
        for pin in target.records where pin.record.fiber !== self {
            pin.record.fiber.consumerPins += 1
        }
        let scope = EffectScope(ctx: ctx)
        self.scope = scope
        do {
            let loaded = try runner.instantiate(ctx)
            instance = loaded.object
            do {
                try await loaded.apply(scope)
            } catch is EffectAbortedError {
                // The plugin ended its `apply` early (cordis-ios's abort): what it collected stays.
            }
            if !scope.providesItself {
                // A plugin that declares its own `apply` is provided once it returns.
                if let service = loaded.object as? any ServicePlugin {
                    try service.provideItself(in: scope)
                } else {
                    for provision in loaded.provisions() {
                        try ctx.provide(name: provision.name, value: provision.value, in: scope)
                    }
                }
            }
        } catch {
            scope.seal()
            await scope.close()
            self.scope = nil
            instance = nil
            releaseProviders()
            if CordisError.isWithdrawal(error) || currentTarget() != target {
                world.logger(for: self).debug("\(name) went back to pending: \(error)")
                if CordisError.isWithdrawal(error) { retryLater(target) }
                setState(.pending)
            } else {
                self.error = error
                failedTarget = target
                // The logger is named after the fiber already: the line is the error, as cordis-ios logs it.
                world.logger(for: self).error("\(error)")
                setState(.failed)
            }
            return
        }
        error = nil
        endWithdrawnLoad()
        if wantsDispose || !staysActive(with: currentTarget()) {
            // cordis-ios's inertia: a load whose providers changed (or that is to restart or stop) while
            // it ran goes on to unloading without showing `active`; the driver's next step unloads it.
            state = .active
            return
        }
        setState(.active)
    }

    /// After a load failed with `withdrawn`: the same providers are tried again after a delay that
    /// doubles with each failure in a row (50 ms up to 5 s), not at once. A call to a provider that is
    /// gone fails without suspending, so loading again at once repeated the failure for ever in one job
    /// of `CordisActor`, which then ran nothing else (a node answered no peer and no console). A change
    /// of providers loads the fiber at once (`nextStep`): a proxy of a member life that ended is replaced
    /// or removed; the retry is for a provider that serves again unchanged (a link taking over).
    private func retryLater(_ target: Target) {
        let failures = withdrawnLoad.map { $0.isSame(as: target) ? $0.failures + 1 : 1 } ?? 1
        withdrawnLoad?.retry.cancel()
        let delay = WithdrawnLoad.delay(afterFailures: failures)
        let clock = world.clock
        let retry = Task { @CordisActor [weak self] in
            try? await clock.sleep(for: delay)
            guard !Task.isCancelled, let self else { return }
            self.withdrawnLoad?.isDue = true
            self.schedule()
        }
        withdrawnLoad = WithdrawnLoad(providers: target.records.map(\.record.id), failures: failures, retry: retry)
    }

    private func endWithdrawnLoad() {
        withdrawnLoad?.retry.cancel()
        withdrawnLoad = nil
    }

    private func unload(to final: FiberState) async {
        scope?.seal()
        setState(.unloading)
        // Consumers leave first: the provider's own teardown waits until they have let go.
        while consumerPins > 0 || !withdrawalHolds.isEmpty {
            await withCheckedContinuation { consumerWaiters.append($0) }
        }
        if let scope {
            await scope.close()
        }
        scope = nil
        instance = nil
        releaseProviders()
        if final == .disposed {
            finalize()
        } else if final == .pending, !wantsDispose, let target = currentTarget(), !waitsForRetry(target) {
            // cordis-ios's inertia: providers that are back by the end of the unload load it again
            // without showing `pending` in between; the driver's next step loads it.
            state = .pending
        } else {
            setState(final)
        }
    }

    private func releaseProviders() {
        let held = resolved
        resolved = []
        for pin in held where pin.record.fiber !== self {
            pin.record.fiber.releasePin()
        }
    }

    private func releasePin() {
        // Never below zero: every release matches a load's pin (the tests run with the assertion on).
        assert(consumerPins > 0, "fiber \(id) (\(name)): a consumer released a pin it did not hold")
        consumerPins = max(0, consumerPins - 1)
        wakeWithdrawal()
    }

    private func wakeWithdrawal() {
        guard consumerPins == 0, withdrawalHolds.isEmpty else { return }
        let waiters = consumerWaiters
        consumerWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Holds this fiber's withdrawal (its own teardown) until the returned token is released: the node uses
    /// it to wait for remote consumers' acknowledgements.
    package func holdWithdrawal(_ reason: String) -> WithdrawalHold {
        nextHoldID += 1
        let token = nextHoldID
        withdrawalHolds[token] = reason
        return WithdrawalHold { [weak self] in
            guard let self else { return }
            self.withdrawalHolds[token] = nil
            self.wakeWithdrawal()
        }
    }

    private func finalize() {
        endWithdrawnLoad()
        for dependency in runner.dependencies {
            world.registry.removeDependent(self, on: slot(for: dependency.name))
        }
        parentHandle?.detach()
        parentHandle = nil
        world.forget(self)
        let reason = disposeReason ?? .explicit
        setState(.disposed)
        let observers = onDispose
        onDispose.removeAll()
        for observer in observers { observer(self, reason) }
        world.events.emitInternal(.fiberChanged, self)
        strongContext = nil
    }

    private func setState(_ next: FiberState) {
        let old = state
        guard old != next else { return }
        state = next
        if old == .active || next == .active || next == .unloading {
            for record in records { world.registry.refresh(record.slot) }
        }
        world.events.emitInternal(.statusChanged, (fiber: self, oldState: old))
    }

    func reportDisposerError(_ error: any Error, label: String) {
        world.logger(for: self).error("disposer \(label) of \(name) failed: \(error)")
    }

    // MARK: - Provided services

    func register(_ record: ProviderRecord) {
        records.append(record)
    }

    func unregister(_ record: ProviderRecord) {
        records.removeAll { $0 === record }
    }
}

/// A fiber's load that failed with `withdrawn` while its providers stayed registered: which providers
/// (by record), how many such failures came in a row, and the retry that makes it due. A class, so a
/// fiber that never had such a failure pays one pointer for it, not the whole record.
@CordisActor
final class WithdrawnLoad {
    /// The ids of the provider records of the failed load, in the order of the fiber's dependencies
    /// (ids, not object identities: a record provided after the old one was freed may take its address).
    let providers: [Int]
    /// Failures with `withdrawn` in a row on these providers.
    let failures: Int
    /// Sleeps for the delay, then marks the load due and schedules the fiber.
    let retry: Task<Void, Never>
    /// Whether the retry's delay has passed (the next step loads these providers again).
    var isDue = false

    init(providers: [Int], failures: Int, retry: Task<Void, Never>) {
        self.providers = providers
        self.failures = failures
        self.retry = retry
    }

    /// The delay before the retry after `failures` failures in a row: 50 ms, doubling, at most 5 s.
    nonisolated static func delay(afterFailures failures: Int) -> Duration {
        // Seven doublings (6.4 s) pass the cap; bounding the shift keeps it from overflowing.
        min(.milliseconds(50 << min(max(failures - 1, 0), 7)), .seconds(5))
    }

    /// Whether `target` resolves to the same provider records.
    func isSame(as target: Fiber.Target) -> Bool {
        providers.elementsEqual(target.records.lazy.map(\.record.id))
    }
}

/// A hold on a provider's withdrawal; release it once the remote consumers it stands for have let go.
@CordisActor
package final class WithdrawalHold {
    private var releaser: (@CordisActor () -> Void)?

    init(_ releaser: @escaping @CordisActor () -> Void) {
        self.releaser = releaser
    }

    /// Lets the withdrawal proceed. Releasing twice does nothing more.
    package func release() {
        releaser?()
        releaser = nil
    }
}

extension Fiber: CustomStringConvertible {
    /// `Fiber #id <name> state`.
    public nonisolated var description: String { "Fiber #\(id)" }
}

/// Which fiber transition the current task runs code for: set around each transition by the fiber's
/// driver and inherited by the tasks it starts (listeners, child tasks), so a fiber can tell a request
/// from its own transition (applied when it ends) from one it may wait for.
struct TransitionMark: Sendable, Hashable {
    /// The fiber, by identity.
    let fiber: ObjectIdentifier
    /// The fiber's count of transitions when this one began.
    let serial: Int

    @TaskLocal static var current: TransitionMark?
}
