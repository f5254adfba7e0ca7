// What the ports of cordis-ios's tests share: the keys and events they use, recorders, gates that hold
// a plugin's body until the test lets it go, and waits with a deadline that replace cordis-ios's
// `settle()` (a 20 ms sleep) by awaiting the state the next expectation needs.
import Cordis
import Testing

// MARK: - Errors, events, services

/// An error whose description is its message, thrown by the plugins and listeners of the tests.
struct TestError: Error, CustomStringConvertible, Equatable {
    let message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}

/// An event without arguments that never bails.
enum CustomEvent: EventKey {
    typealias Args = Void
    typealias Result = Never
    static let name = "custom-event"
}

/// An event carrying a number whose listeners may answer with one (waterfalls and bails).
enum WaterfallEvent: EventKey {
    typealias Args = Int
    typealias Result = Int
    static let name = "test/waterfall"
}

/// The value of the `foo` service.
struct Payload: Sendable, Equatable {
    let bar: Int
}

/// The service `foo`, holding a `Payload`.
enum Foo: ServiceKey {
    typealias Value = Payload
    static let name = "foo"
}

/// The service `bar`, holding a number.
enum Bar: ServiceKey {
    typealias Value = Int
    static let name = "bar"
}

/// An intercept that marks the listeners registered under it with a flag.
enum FilterKey: InterceptKey {
    typealias Config = Bool
    static let name = "filter"
}

/// An event scope admitting the listeners whose `FilterKey` flag is `flag`, and those without one.
struct Session: EventScope {
    let flag: Bool

    func filter(_ hookContext: Context) -> Bool {
        guard let marked = hookContext.interceptConfig(FilterKey.self) else { return true }
        return marked == flag
    }
}

// MARK: - Function plugins

/// A function plugin with a typed config (cordis-ios's `FunctionPlugin(name:inject:apply:)`).
func functionPlugin<C: Decodable & Sendable>(
    _ config: C.Type, name: String? = nil, inject: [any ServiceKey.Type] = [],
    _ apply: @escaping FunctionPlugin<C>.Apply
) -> FunctionPlugin<C> {
    FunctionPlugin(name: name, inject: inject, apply: apply)
}

/// A function plugin that takes no config.
func functionPlugin(
    name: String? = nil, inject: [any ServiceKey.Type] = [], _ apply: @escaping FunctionPlugin<NoConfig>.Apply
) -> FunctionPlugin<NoConfig> {
    FunctionPlugin(name: name, inject: inject, apply: apply)
}

// MARK: - Observing

/// What a test saw happen, in order.
@CordisActor
final class Recorder<Value> {
    private(set) var calls: [Value] = []

    var count: Int { calls.count }

    func record(_ value: Value) {
        calls.append(value)
    }

    func reset() {
        calls.removeAll()
    }
}

/// How many error messages the world of `ctx` has logged and still keeps (cordis-ios's `errorCount`).
@CordisActor
func loggedErrors(_ ctx: Context) -> Int {
    ctx.logger.buffer.filter { $0.level == .error }.count
}

/// Runs `body`, which must throw an error whose description contains `fragment`.
@CordisActor
func expectError(_ fragment: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("no error was thrown; expected one saying \"\(fragment)\"", sourceLocation: sourceLocation)
    } catch {
        #expect(String(describing: error).contains(fragment), "\(error)", sourceLocation: sourceLocation)
    }
}

// MARK: - Waiting for a state, with a deadline

/// A state a test waited for did not come before its deadline.
struct WaitTimedOut: Error, CustomStringConvertible {
    let what: String
    let seconds: Int

    var description: String { "timed out after \(seconds) s waiting for \(what)" }
}

/// Waits until `condition` holds, yielding `CordisActor` between checks so the plugin world runs on;
/// throws `WaitTimedOut` naming `what` once `seconds` of wall-clock time have passed.
@CordisActor
func until(_ what: String, seconds: Int = 10, _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    // Bounded by the deadline: every pass checks the clock, then yields once.
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimedOut(what: what, seconds: seconds) }
        await Task.yield()
    }
}

/// Waits until no fiber of `ctx`'s world has a transition in flight (`ctx.settled()`), within a
/// deadline: the world has gone as far as it can, so what has not happened by then will not happen.
@CordisActor
func quiescence(of ctx: Context, seconds: Int = 10) async throws {
    let settled = Box(false)
    Task {
        await ctx.settled()
        settled.value = true
    }
    try await until("the plugin world to settle", seconds: seconds) { settled.value }
}

/// Waits until each fiber has no transition in flight or scheduled (`isSettled`), within a deadline.
@CordisActor
func settled(_ fibers: Fiber..., seconds: Int = 10) async throws {
    for fiber in fibers {
        try await until("\(fiber) (\(fiber.name), now \(fiber.state)) to settle", seconds: seconds) { fiber.inertia == nil }
    }
}

// MARK: - Gates

/// A gate a plugin's body waits at until the test opens it; the test can wait for a body to arrive.
@CordisActor
final class Gate {
    let name: String
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    /// How many times a body came to the gate, open or closed.
    private(set) var arrivals = 0

    init(_ name: String = "the gate") {
        self.name = name
    }

    /// Returns once the gate is open (at once if it is).
    func wait() async {
        arrivals += 1
        guard !isOpen else { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Opens the gate for good, letting every waiting body go.
    func open() {
        isOpen = true
        let released = waiters
        waiters.removeAll()
        for waiter in released { waiter.resume() }
    }

    /// Waits until a body has come to the gate: while the gate is closed, the body is blocked at it.
    func reached(seconds: Int = 10) async throws {
        try await until("a body to reach \(name)", seconds: seconds) { arrivals > 0 }
    }
}

/// A row of gates a body passes one after another: its first `wait()` waits at gate 0, the next at
/// gate 1, and so on.
@CordisActor
final class GateList {
    let name: String
    private var gates: [Gate] = []
    private var passes = 0

    init(_ name: String = "gates") {
        self.name = name
    }

    /// Gate `index`, made on first use.
    func gate(_ index: Int) -> Gate {
        // Bounded by `index`.
        while gates.count <= index { gates.append(Gate("\(name) gate \(gates.count)")) }
        return gates[index]
    }

    /// Waits at the next gate of the row.
    func wait() async {
        let next = gate(passes)
        passes += 1
        await next.wait()
    }
}
