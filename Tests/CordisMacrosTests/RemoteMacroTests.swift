import Testing

@Suite("RemoteMacro")
struct RemoteMacroTests {
    @Test func aPublicProtocolGetsAPublicProxyAndInterface() {
        assertMacroExpansion(
            """
            @Remote public protocol ClockAPI: Sendable {
                func now() async throws -> ClockReading
            }
            """,
            expandsTo: """
            public protocol ClockAPI: Sendable {
                func now() async throws -> ClockReading
            }

            public struct ClockAPIProxy: ClockAPI, Sendable {
                public let endpoint: any Cordis.RemoteEndpoint
                public init(endpoint: any Cordis.RemoteEndpoint) {
                    self.endpoint = endpoint
                }
                public func now() async throws -> ClockReading {
                    let arguments = Cordis.JSONObject()
                    let result = try await endpoint.call(method: "now", arguments: arguments)
                    return try Cordis.RemoteCoding.result(ClockReading.self, of: "now", from: result)
                }
            }

            public enum ClockAPIRemote: Cordis.RemoteInterface {
                public typealias API = any ClockAPI
                public static let name = "ClockAPI"
                public static let version = "e9ff3a5eeb59b3b1"
                public static let methods = ["now"]
                public static func proxy(_ endpoint: any Cordis.RemoteEndpoint) -> any ClockAPI {
                    ClockAPIProxy(endpoint: endpoint)
                }
                public static func dispatch(_ instance: any ClockAPI, method: String, arguments: Cordis.JSONObject) async throws -> Cordis.JSONValue {
                    switch method {
                    case "now":
                        return try Cordis.RemoteCoding.encode(try await instance.now())
                    default:
                        throw Cordis.RemoteCoding.unknownMethod(method, in: "ClockAPI")
                    }
                }
            }
            """)
    }

    @Test func anInternalProtocolKeysArgumentsByLabelAndPositionAndIgnoresAVoidResult() {
        assertMacroExpansion(
            """
            @Remote protocol CounterAPI: Sendable {
                func add(_ delta: Int) async throws -> Int
                func value() async throws -> Int
                func reset(to start: Int, note: String) async throws
            }
            """,
            expandsTo: """
            protocol CounterAPI: Sendable {
                func add(_ delta: Int) async throws -> Int
                func value() async throws -> Int
                func reset(to start: Int, note: String) async throws
            }

            struct CounterAPIProxy: CounterAPI, Sendable {
                let endpoint: any Cordis.RemoteEndpoint
                init(endpoint: any Cordis.RemoteEndpoint) {
                    self.endpoint = endpoint
                }
                func add(_ delta: Int) async throws -> Int {
                    var arguments = Cordis.JSONObject()
                    arguments["_0"] = try Cordis.RemoteCoding.encode(delta)
                    let result = try await endpoint.call(method: "add", arguments: arguments)
                    return try Cordis.RemoteCoding.result(Int.self, of: "add", from: result)
                }
                func value() async throws -> Int {
                    let arguments = Cordis.JSONObject()
                    let result = try await endpoint.call(method: "value", arguments: arguments)
                    return try Cordis.RemoteCoding.result(Int.self, of: "value", from: result)
                }
                func reset(to start: Int, note: String) async throws {
                    var arguments = Cordis.JSONObject()
                    arguments["to"] = try Cordis.RemoteCoding.encode(start)
                    arguments["note"] = try Cordis.RemoteCoding.encode(note)
                    _ = try await endpoint.call(method: "reset", arguments: arguments)
                }
            }

            enum CounterAPIRemote: Cordis.RemoteInterface {
                typealias API = any CounterAPI
                static let name = "CounterAPI"
                static let version = "6632be41af424c97"
                static let methods = ["add", "value", "reset"]
                static func proxy(_ endpoint: any Cordis.RemoteEndpoint) -> any CounterAPI {
                    CounterAPIProxy(endpoint: endpoint)
                }
                static func dispatch(_ instance: any CounterAPI, method: String, arguments: Cordis.JSONObject) async throws -> Cordis.JSONValue {
                    switch method {
                    case "add":
                        return try Cordis.RemoteCoding.encode(try await instance.add(try Cordis.RemoteCoding.argument(Int.self, "_0", of: "add", in: arguments)))
                    case "value":
                        return try Cordis.RemoteCoding.encode(try await instance.value())
                    case "reset":
                        try await instance.reset(to: try Cordis.RemoteCoding.argument(Int.self, "to", of: "reset", in: arguments), note: try Cordis.RemoteCoding.argument(String.self, "note", of: "reset", in: arguments))
                        return .null
                    default:
                        throw Cordis.RemoteCoding.unknownMethod(method, in: "CounterAPI")
                    }
                }
            }
            """)
    }

    /// The version of a one-method protocol, read from its expansion.
    func version(of source: String) throws -> String {
        let expanded = expandCordisMacros(in: source).expanded
        let line = try #require(expanded.split(separator: "\n").first { $0.contains("static let version = ") })
        let quoted = line.split(separator: "\"", omittingEmptySubsequences: false)
        return String(try #require(quoted.count == 3 ? quoted[1] : nil))
    }

    @Test func theVersionIgnoresWhiteSpaceAndCommentsButNotTypes() throws {
        let plain = try version(of: "@Remote protocol P: Sendable { func f(_ a: [Int], b: String?) async throws -> Int }")
        let spaced = try version(of: """
            @Remote protocol P: Sendable {
                func f(_ a: [ Int ] /* list */, b : String?) async   throws ->  Int
            }
            """)
        let retyped = try version(of: "@Remote protocol P: Sendable { func f(_ a: [Int], b: Int?) async throws -> Int }")
        let relabelled = try version(of: "@Remote protocol P: Sendable { func f(a: [Int], b: String?) async throws -> Int }")
        #expect(plain == spaced)
        #expect(plain != retyped)
        #expect(plain != relabelled)
        #expect(plain.count == 16 && plain.allSatisfy { $0.isHexDigit && !$0.isUppercase })
    }

    @Test func aRequirementThatRunsOnItsCallersExecutorKeepsItsVersion() throws {
        let source = "@Remote protocol P: Sendable { nonisolated(nonsending) func f(_ a: Int) async throws -> Int }"
        let concurrent = try version(of: "@Remote protocol P: Sendable { func f(_ a: Int) async throws -> Int }")
        #expect(try version(of: source) == concurrent)
        let expanded = expandCordisMacros(in: source).expanded
        // The proxy's method is plain: Swift gives a witness of such a requirement its isolation.
        #expect(expanded.contains("    func f(_ a: Int) async throws -> Int {"))
        #expect(expandCordisMacros(in: source).diagnostics.isEmpty)
    }

    @Test func parametersThatWouldShadowTheProxysLocalsAreRenamed() {
        let expanded = expandCordisMacros(
            in: "@Remote protocol P: Sendable { func f(_ _: Int, arguments: String) async throws }").expanded
        #expect(expanded.contains("func f(_ argument0: Int, arguments argument1: String) async throws {"))
        #expect(expanded.contains("arguments[\"_0\"] = try Cordis.RemoteCoding.encode(argument0)"))
        #expect(expanded.contains("arguments[\"arguments\"] = try Cordis.RemoteCoding.encode(argument1)"))
        #expect(expanded.contains("try await instance.f(try Cordis.RemoteCoding.argument(Int.self, \"_0\""))
    }

    @Test func aPrivateProtocolGetsFileprivatePeers() {
        let expanded = expandCordisMacros(
            in: "@Remote private protocol P: Sendable { func f() async throws }").expanded
        #expect(expanded.contains("fileprivate struct PProxy: P, Sendable {"))
        #expect(expanded.contains("fileprivate enum PRemote: Cordis.RemoteInterface {"))
        #expect(expanded.contains("static let methods = [\"f\"]"))
    }

    @Test func aProtocolWithoutMethodsGetsATypedEmptyMethodList() {
        let expanded = expandCordisMacros(in: "@Remote protocol P: Sendable {}").expanded
        #expect(expanded.contains("static let methods: [String] = []"))
    }
}

@Suite("RemoteMacro diagnostics")
struct RemoteMacroDiagnosticTests {
    /// Expands `source` and expects exactly `diagnostics`, and no peers.
    func expect(_ source: String, _ diagnostics: [ExpectedDiagnostic], sourceLocation: SourceLocation = #_sourceLocation) {
        let result = expandCordisMacros(in: source)
        #expect(result.diagnostics == diagnostics, sourceLocation: sourceLocation)
        #expect(!result.expanded.contains("Proxy"), sourceLocation: sourceLocation)
        #expect(!result.expanded.contains("RemoteInterface"), sourceLocation: sourceLocation)
    }

    @Test func remoteOnAStructIsAnError() {
        expect(
            """
            @Remote struct Clock {
                func now() async throws -> Double { 0 }
            }
            """,
            [ExpectedDiagnostic("@Remote can only be attached to a protocol", line: 1, column: 1)])
    }

    @Test func aProtocolThatIsNotSendableIsAnError() {
        expect(
            """
            @Remote protocol ClockAPI {
                func now() async throws -> Double
            }
            """,
            [ExpectedDiagnostic(
                "@Remote protocols must inherit 'Sendable': providers run on CordisActor and proxies are called from any task",
                line: 1, column: 18)])
    }

    @Test func aPropertyRequirementIsAnError() {
        expect(
            """
            @Remote protocol ClockAPI: Sendable {
                var zone: String { get }
                func now() async throws -> Double
            }
            """,
            [ExpectedDiagnostic(
                "@Remote protocols can only declare instance methods; move this property to another protocol",
                line: 2, column: 5)])
    }

    @Test func aSubscriptRequirementIsAnError() {
        expect(
            """
            @Remote protocol ClockAPI: Sendable {
                subscript(index: Int) -> Double { get }
            }
            """,
            [ExpectedDiagnostic(
                "@Remote protocols can only declare instance methods; move this subscript to another protocol",
                line: 2, column: 5)])
    }

    @Test func anAssociatedTypeIsAnError() {
        expect(
            """
            @Remote protocol ClockAPI: Sendable {
                associatedtype Reading: Codable
                func now() async throws -> Reading
            }
            """,
            [ExpectedDiagnostic(
                "@Remote protocols can only declare instance methods; move this associated type to another protocol",
                line: 2, column: 5)])
    }

    @Test func aStaticMethodIsAnError() {
        expect(
            """
            @Remote protocol ClockAPI: Sendable {
                static func make() async throws -> Double
            }
            """,
            [ExpectedDiagnostic(
                "@Remote protocols can only declare instance methods; move this static method to another protocol",
                line: 2, column: 5)])
    }

    @Test func aMethodThatIsNotAsyncThrowsIsAnError() {
        expect(
            """
            @Remote protocol ClockAPI: Sendable {
                func now() async -> Double
                func zone() throws -> String
            }
            """,
            [
                ExpectedDiagnostic(
                    "@Remote method 'now' must be 'async throws': a remote call waits for the network and can fail",
                    line: 2, column: 10),
                ExpectedDiagnostic(
                    "@Remote method 'zone' must be 'async throws': a remote call waits for the network and can fail",
                    line: 3, column: 10),
            ])
    }

    @Test func aGenericMethodIsAnError() {
        expect(
            """
            @Remote protocol StoreAPI: Sendable {
                func load<T: Codable>(_ key: String) async throws -> T
                func save(_ value: some Codable) async throws
            }
            """,
            [
                ExpectedDiagnostic(
                    "@Remote methods cannot be generic: arguments and results need concrete Codable types",
                    line: 2, column: 14),
                ExpectedDiagnostic(
                    "@Remote methods cannot be generic: arguments and results need concrete Codable types",
                    line: 3, column: 24),
            ])
    }

    @Test func anInoutParameterIsAnError() {
        expect(
            """
            @Remote protocol CounterAPI: Sendable {
                func add(_ delta: inout Int) async throws
            }
            """,
            [ExpectedDiagnostic(
                "@Remote method parameters cannot be 'inout': arguments travel by value", line: 2, column: 14)])
    }

    @Test func aVariadicParameterIsAnError() {
        expect(
            """
            @Remote protocol CounterAPI: Sendable {
                func add(_ deltas: Int...) async throws -> Int
            }
            """,
            [ExpectedDiagnostic(
                "@Remote method parameters cannot be variadic; take an array instead", line: 2, column: 14)])
    }

    @Test func twoMethodsWithOneNameAreAnError() {
        expect(
            """
            @Remote protocol CounterAPI: Sendable {
                func add(_ delta: Int) async throws -> Int
                func add(_ delta: Double) async throws -> Double
            }
            """,
            [ExpectedDiagnostic(
                "@Remote methods need distinct names: calls are routed by name and 'add' is declared twice",
                line: 3, column: 10)])
    }

    @Test func inheritingAnythingButSendableIsAnError() {
        expect(
            """
            @Remote protocol CounterAPI: Sendable, AnyObject {
                func value() async throws -> Int
            }
            """,
            [ExpectedDiagnostic(
                "@Remote protocols can only inherit 'Sendable': the proxy implements only the requirements declared here",
                line: 1, column: 40)])
    }
}
