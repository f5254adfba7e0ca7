import Synchronization
import Testing
@testable import Cordis

enum LoggingServiceKey: ServiceKey {
    typealias Value = LoggingService
    static let name = "logging-foo"
}

/// cordis's `FooService` (`static name = 'foo:driver'`): logs from its methods and its `apply`.
@CordisActor @Service(LoggingServiceKey.self)
final class LoggingService {
    static var name: String { "foo:driver" }

    func apply(_ scope: EffectScope) async throws {
        ctx.logger.debug("init")
    }

    func action() {
        ctx.logger.debug("action")
    }
}

/// cordis `logger.spec.ts` (describe `Logger`).
@Suite("Logger", .timeLimit(.minutes(1))) @CordisActor
struct LoggerTests {
    @Test func theRootLogsUnderTheNameRoot() async throws {
        let (root, logs) = try makeRoot()
        root.logger.debug("hello")
        #expect(logs.names == ["root"])
        #expect(logs.all.first?.text == "hello")
        #expect(logs.all.first?.fiberID == root.fiber.id)
    }

    @Test func anExplicitLoggerNameWins() async throws {
        let (root, logs) = try makeRoot()
        root.logger("custom").debug("hello")
        #expect(logs.names == ["custom"])
    }

    @Test func theNearestLoggerInterceptNameNamesTheLogger() async throws {
        let (root, logs) = try makeRoot()
        root.intercept(LoggerIntercept.self, .init(name: "intercepted")).logger.debug("hello")
        #expect(logs.names == ["intercepted"])
    }

    @Test func aPluginLogsUnderItsName() async throws {
        let (root, logs) = try makeRoot()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "greeter") { _, _, scope in scope.ctx.logger.info("hello") })
        try await fiber.await()
        #expect(logs.names == ["greeter"])
        #expect(logs.all.first?.fiberID == fiber.id)
    }

    @Test func aServiceLogsUnderItsOwnNameFromItsMethodsAndItsApplyWhoeverCalls() async throws {
        let (root, logs) = try makeRoot()
        try await root.plugin(LoggingService.self).await()
        let caller = try root.plugin(FunctionPlugin<NoConfig>(name: "caller", inject: [LoggingServiceKey.self]) { _, _, scope in
            try scope.ctx[LoggingServiceKey.self].action()
        })
        try await caller.await()
        try root[LoggingServiceKey.self].action()
        #expect(logs.names == ["foo:driver", "foo:driver", "foo:driver"])
        #expect(logs.all.map(\.text) == ["init", "action", "action"])
        #expect(!logs.names.contains("root") && !logs.names.contains("caller"))
    }

    @Test func anExporterTakesOnlyItsLevelsAndIsAnEffectOfItsFiber() async throws {
        let (root, all) = try makeRoot()
        let warnings = CapturedLogs(level: .warn)
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "exporter") { _, _, scope in
            try scope.ctx.logger.exporter(warnings)
        })
        try await fiber.await()
        root.logger.debug("detail")
        root.logger.warn("careful")
        root.logger.error("broken")
        #expect(warnings.all.map(\.text) == ["careful", "broken"])
        try await fiber.dispose()
        root.logger.error("after")
        #expect(warnings.all.count == 2)
        #expect(all.all.map(\.text) == ["detail", "careful", "broken", "after"])
    }

    @Test("the buffer keeps records from its level; an exporter still gets the rest; nothing taken is not even built")
    func recordsNothingTakesAreDropped() async throws {
        let hub = LogHub(capacity: 10, recentLevel: .info)
        let logger = Logger(name: "levels", hub: hub)
        let built = Mutex(0)
        func detail() -> String {
            built.withLock { $0 += 1 }
            return "detail"
        }
        #expect(!hub.takes(.debug) && hub.takes(.info))
        logger.debug(detail(), fields: [("KEY", detail())])
        logger.info("kept")
        #expect(built.withLock { $0 } == 0, "a debug line nothing takes is not built")
        #expect(hub.recent.map(\.text) == ["kept"])

        let verbose = CapturedLogs(level: .debug)
        let token = hub.add(verbose)
        #expect(hub.takes(.debug))
        logger.debug(detail())
        #expect(built.withLock { $0 } == 1)
        #expect(verbose.all.map(\.text) == ["detail"], "an exporter at debug gets it")
        #expect(hub.recent.map(\.text) == ["kept"], "the buffer still keeps only info and above")
        hub.remove(token)
        #expect(!hub.takes(.debug), "without the exporter nothing takes debug again")

        hub.recentLevel = .debug
        logger.debug(detail())
        #expect(hub.recent.map(\.text) == ["kept", "detail"])
        #expect(hub.recent.map(\.sequence) == [1, 3], "every record taken is numbered")
    }

    @Test func recentLogsKeepTheNewestRecordsInOrder() async throws {
        let hub = LogHub(capacity: 3)
        let logger = Logger(name: "bounded", hub: hub)
        for index in 0..<5 { logger.info("\(index)") }
        #expect(hub.recent.map(\.text) == ["2", "3", "4"])
        #expect(hub.recent.map(\.sequence) == [3, 4, 5])
    }
}
