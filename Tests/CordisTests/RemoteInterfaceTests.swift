import Cordis
import Synchronization
import Testing

// The file imports `Cordis` only (not `@testable`), as a client would: the code `@Remote` generates
// must compile with nothing else in scope.

/// A value with several fields, to show structs travel as JSON.
struct CounterNote: Codable, Sendable, Hashable {
    var text: String
    var at: Int
}

// `Sendable`: a consumer on `CordisActor` calls the injected `any CounterAPI` from its own isolation,
// which Swift 6 allows only for a Sendable existential.
@Remote protocol CounterAPI: Sendable {
    func add(_ delta: Int) async throws -> Int
    func value() async throws -> Int
    func reset(to start: Int, note: String) async throws
    func notes(since first: Int) async throws -> [CounterNote]
}

/// The local implementation the loopback endpoint dispatches to.
@CordisActor final class LocalCounter: CounterAPI {
    private(set) var count = 0
    private(set) var history: [CounterNote] = []

    func add(_ delta: Int) async throws -> Int {
        count += delta
        return count
    }

    func value() async throws -> Int { count }

    func reset(to start: Int, note: String) async throws {
        count = start
        history.append(CounterNote(text: note, at: start))
    }

    func notes(since first: Int) async throws -> [CounterNote] {
        Array(history.dropFirst(first))
    }
}

/// A `RemoteEndpoint` that serves calls from a local instance through `CounterAPIRemote.dispatch`,
/// turning the arguments and the result into JSON text and back so that only what JSON carries arrives.
struct LoopbackEndpoint: RemoteEndpoint {
    /// What crossed the "wire": one `method arguments -> result` line per call.
    final class Wire: Sendable {
        let lines = Mutex<[String]>([])
    }

    let counter: LocalCounter
    let wire = Wire()

    func call(method: String, arguments: JSONObject) async throws -> JSONDocument {
        let sentText = JSONValue.object(arguments).jsonString()
        guard case .object(let received) = try JSONValue(parsing: sentText) else {
            throw RemoteCallError(.invalidArguments, "arguments are not an object")
        }
        let result = try await CounterAPIRemote.dispatch(counter, method: method, arguments: received)
        let resultText = result.jsonString()
        wire.lines.withLock { $0.append("\(method) \(sentText) -> \(resultText)") }
        return try JSONDocument(parsing: resultText)
    }
}

@Remote protocol ScaleByIntAPI: Sendable {
    func scale(_ value: Double, by factor: Int) async throws -> Double
}

@Remote protocol ScaleByDoubleAPI: Sendable {
    func scale(_ value: Double, by factor: Double) async throws -> Double
}

@Remote protocol ScaleAgainAPI: Sendable {
    func scale(_ value: Double, by factor: Int) async throws -> Double
}

/// A requirement that runs on its caller's executor (`nonisolated(nonsending)`).
@Remote protocol EchoAPI: Sendable {
    nonisolated(nonsending) func echo(_ text: String) async throws -> String
}

/// An endpoint that echoes argument `_0` and records, per call, whether it ran on `CordisActor`.
struct IsolationProbeEndpoint: RemoteEndpoint {
    final class Seen: Sendable {
        let onCordisActor = Mutex<[Bool]>([])
    }

    let seen = Seen()

    nonisolated(nonsending) func call(method: String, arguments: JSONObject) async throws -> JSONDocument {
        let isolation = #isolation
        seen.onCordisActor.withLock { $0.append(isolation === CordisActor.shared) }
        return JSONDocument(arguments["_0"] ?? .null)
    }
}

/// The remote-capable service key of the counter.
enum RemoteCounterKey: RemoteServiceKey {
    typealias Value = any CounterAPI
    typealias Interface = CounterAPIRemote
    static let name = "remote-counter"
}

/// A consumer that adds one to whatever counter it is given, as `badge` does.
@CordisActor @Plugin
final class RemoteBadge {
    @Inject(RemoteCounterKey.self) var counter: any CounterAPI

    func apply(_ scope: EffectScope) async throws {
        _ = try await counter.add(1)
    }
}

@Suite("Remote interface", .timeLimit(.minutes(1))) @CordisActor
struct RemoteInterfaceTests {
    @Test func proxyCallsGiveTheSameResultsAsDirectCalls() async throws {
        let direct = LocalCounter()
        let remote = LocalCounter()
        let endpoint = LoopbackEndpoint(counter: remote)
        let proxy = CounterAPIRemote.proxy(endpoint)

        #expect(try await proxy.add(5) == direct.add(5))
        #expect(try await proxy.add(-2) == direct.add(-2))
        #expect(try await proxy.value() == direct.value())
        try await proxy.reset(to: 10, note: "morning")
        try await direct.reset(to: 10, note: "morning")
        try await proxy.reset(to: 7, note: "noon \"quoted\" é")
        try await direct.reset(to: 7, note: "noon \"quoted\" é")
        #expect(try await proxy.value() == 7)
        #expect(try await proxy.notes(since: 0) == direct.notes(since: 0))
        #expect(try await proxy.notes(since: 1) == [CounterNote(text: "noon \"quoted\" é", at: 7)])
        #expect(remote.history == direct.history)

        let lines = endpoint.wire.lines.withLock { $0 }
        #expect(lines.first == "add {\"_0\":5} -> 5")
        #expect(lines.contains("reset {\"to\":10,\"note\":\"morning\"} -> null"))
        #expect(lines.last == "notes {\"since\":1} -> [{\"text\":\"noon \\\"quoted\\\" é\",\"at\":7}]")
    }

    @Test func aCallStaysOnTheCallersActorDownToTheEndpointWhenItsRequirementSaysSo() async throws {
        let endpoint = IsolationProbeEndpoint()
        #expect(try await EchoAPIRemote.proxy(endpoint).echo("hi") == "hi")
        // A requirement of the default kind leaves the caller's actor as it starts, as every plain
        // `nonisolated` async function does: its endpoint runs on the default pool.
        _ = try? await CounterAPIRemote.proxy(endpoint).value()
        #expect(endpoint.seen.onCordisActor.withLock { $0 } == [true, false])
    }

    @Test func theInterfaceDescribesTheProtocol() {
        #expect(CounterAPIRemote.name == "CounterAPI")
        #expect(CounterAPIRemote.methods == ["add", "value", "reset", "notes"])
        #expect(CounterAPIRemote.version.count == 16)
        #expect(CounterAPIRemote.version.allSatisfy { "0123456789abcdef".contains($0) })
    }

    @Test func anUnknownMethodIsAnUnknownMethodError() async throws {
        let endpoint = LoopbackEndpoint(counter: LocalCounter())
        let error = await #expect(throws: RemoteCallError.self) {
            try await endpoint.call(method: "multiply", arguments: ["_0": 2])
        }
        #expect(error?.code == .unknownMethod)
        #expect(error?.message == "interface CounterAPI has no method multiply")
    }

    @Test func argumentsThatDoNotDecodeAreAnInvalidArgumentsError() async throws {
        let counter = LocalCounter()
        let endpoint = LoopbackEndpoint(counter: counter)
        let wrongType = await #expect(throws: RemoteCallError.self) {
            try await endpoint.call(method: "add", arguments: ["_0": "one"])
        }
        #expect(wrongType?.code == .invalidArguments)
        #expect(wrongType?.message.hasPrefix("add: argument _0:") == true)

        let missing = await #expect(throws: RemoteCallError.self) {
            try await endpoint.call(method: "reset", arguments: ["to": 3])
        }
        #expect(missing?.code == .invalidArguments)
        #expect(missing?.message.hasPrefix("reset: argument note:") == true)
        #expect(counter.count == 0)
        #expect(counter.history.isEmpty)
    }

    @Test func aResultThatDoesNotDecodeIsAnInvalidArgumentsError() async throws {
        struct WrongResult: RemoteEndpoint {
            func call(method: String, arguments: JSONObject) async throws -> JSONDocument {
                try JSONDocument(parsing: #""seven""#)
            }
        }
        let error = await #expect(throws: RemoteCallError.self) {
            try await CounterAPIRemote.proxy(WrongResult()).value()
        }
        #expect(error?.code == .invalidArguments)
        #expect(error?.message.hasPrefix("value: result:") == true)
    }

    @Test func theVersionChangesWithAParameterTypeAndOnlyWithTheSignatures() {
        #expect(ScaleByIntAPIRemote.version != ScaleByDoubleAPIRemote.version)
        #expect(ScaleByIntAPIRemote.version == ScaleAgainAPIRemote.version)
        #expect(ScaleByIntAPIRemote.name != ScaleAgainAPIRemote.name)
    }

    @Test func aConsumerInjectsAProxyProvidedAsAFallback() async throws {
        let root = Context()
        let counter = LocalCounter()
        let endpoint = LoopbackEndpoint(counter: counter)
        let badge = try await root.plugin(RemoteBadge.self).await()
        #expect(badge.state == .pending)
        #expect(badge.missingInjections == [RemoteCounterKey.name])

        try root.provide(name: RemoteCounterKey.name, value: CounterAPIRemote.proxy(endpoint), fallbackRank: "node-b")
        await root.settled()
        #expect(badge.state == .active)
        #expect(counter.count == 1)
        #expect(endpoint.wire.lines.withLock { $0 } == ["add {\"_0\":1} -> 1"])
        #expect(RemoteCounterKey.Interface.name == "CounterAPI")
    }
}
