import Testing
@testable import Cordis

/// Messages a cordis-ios-shaped exporter received, on `CordisActor`.
@CordisActor
private final class Received {
    var messages: [LogMessage] = []
    var texts: [String] { messages.map(\.text) }
}

/// An exporter written as for cordis-ios: an optional level, `export` on `CordisActor`.
private struct RecordingExporter: LogExporter {
    let level: LogLevel?
    let received: Received

    @CordisActor func export(_ message: LogMessage) {
        received.messages.append(message)
    }
}

/// Yields until `condition` holds or ten seconds pass; returns whether it held.
@CordisActor
private func awaitState(_ condition: @CordisActor () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        await Task.yield()
    }
    return true
}

/// cordis-ios's logging API (`LogExporter` on the actor, `LoggerIntercept`, the logger's buffer),
/// with the behaviour cordis-ios documents.
@Suite("cordis-ios logging", .timeLimit(.minutes(1))) @CordisActor
struct CordisIOSLoggingTests {
    @Test func anExporterWithALevelReceivesMessagesAtThatLevelAndAbove() throws {
        let root = Context(logLevel: .error)
        let received = Received()
        try root.logger.exporter(RecordingExporter(level: .warn, received: received))
        root.logger.debug("detail")
        root.logger.info("note")
        root.logger.warn("careful")
        root.logger.error("broken")
        #expect(received.texts == ["careful", "broken"], "delivered before the logging call returns, on the actor")
        #expect(received.messages.map(\.name) == ["root", "root"])
    }

    @Test func anExporterWithoutALevelFollowsTheLevelOfTheLoggerThatLogs() throws {
        let root = Context(logLevel: .error)
        let received = Received()
        try root.logger.exporter(RecordingExporter(level: nil, received: received))
        root.logger.debug("default debug")
        root.logger.info("default info")
        let verbose = root.intercept(LoggerIntercept.self, .init(level: .debug))
        verbose.logger.debug("verbose debug")
        let quiet = root.intercept(LoggerIntercept.self, .init(level: .error))
        quiet.logger.warn("quiet warn")
        quiet.logger.error("quiet error")
        #expect(received.texts == ["default info", "verbose debug", "quiet error"])
    }

    @Test func anExporterStopsWhenItsFiberUnloads() async throws {
        let root = Context(logLevel: .error)
        let received = Received()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "exporting") { _, _, scope in
            try scope.ctx.logger.exporter(RecordingExporter(level: .info, received: received))
            scope.ctx.logger.info("loaded")
        })
        try await fiber.await()
        root.logger.info("while loaded")
        try await fiber.dispose()
        root.logger.info("after unload")
        #expect(received.texts == ["loaded", "while loaded"])
        #expect(received.messages.map(\.name) == ["exporting", "root"])
    }

    @Test func recordsLoggedOffTheActorArriveOnItInOrderBeforeLaterOnes() async throws {
        let root = Context(logLevel: .error)
        let received = Received()
        try root.logger.exporter(RecordingExporter(level: .debug, received: received))
        let logger = root.logger.named("worker")
        await Task.detached {
            for index in 0..<500 { logger.debug("\(index)") }
        }.value
        root.logger.info("on the actor, after")
        let expected = (0..<500).map(String.init) + ["on the actor, after"]
        #expect(await awaitState { received.messages.count >= expected.count })
        #expect(received.texts == expected)

        let later = Received()
        let queue = ExporterQueue(RecordingExporter(level: nil, received: later))
        for index in 0..<3 {
            queue.deliver(LogMessage(level: .info, name: "worker", text: "\(index)"), onActor: false)
        }
        queue.deliver(LogMessage(level: .info, name: "root", text: "on the actor"), onActor: true)
        #expect(later.texts.isEmpty, "a record logged on the actor waits behind the queued ones")
        #expect(await awaitState { later.messages.count >= 4 })
        #expect(later.texts == ["0", "1", "2", "on the actor"])
    }

    @Test func anExporterThatFallsTooFarBehindIsToldHowManyRecordsWereDropped() async throws {
        let received = Received()
        let queue = ExporterQueue(RecordingExporter(level: nil, received: received), limit: 3)
        for index in 0..<5 {
            queue.deliver(LogMessage(level: .info, name: "burst", text: "\(index)"), onActor: false)
        }
        #expect(await awaitState { received.messages.count >= 4 })
        #expect(received.texts == ["0", "1", "2", "2 log records were dropped: this exporter fell 3 records behind"])
        queue.deliver(LogMessage(level: .info, name: "burst", text: "next"), onActor: true)
        #expect(received.texts.last == "next", "once drained, records on the actor go straight through again")

        queue.deliver(LogMessage(level: .info, name: "burst", text: "queued, then removed"), onActor: false)
        queue.remove()
        queue.deliver(LogMessage(level: .info, name: "burst", text: "after removal"), onActor: true)
        let marker = ExporterQueue(RecordingExporter(level: nil, received: received))
        marker.deliver(LogMessage(level: .info, name: "burst", text: "marker"), onActor: false)
        #expect(await awaitState { received.texts.last == "marker" })
        #expect(Array(received.texts.suffix(2)) == ["next", "marker"], "a removed exporter receives nothing queued")
    }

    @Test func aLoggersNameIsExplicitElseTheNearestInterceptElseItsFiber() async throws {
        let root = Context(logLevel: .error)
        let received = Received()
        try root.logger.exporter(ClosureExporter(level: .debug) { received.messages.append($0) })
        root.logger.debug("plain")
        let intercepted = root.intercept(LoggerIntercept.self, .init(name: "intercepted"))
        intercepted.logger.debug("intercepted")
        intercepted.logger.named("custom").debug("named")
        intercepted.logger("explicit").debug("explicit")
        let child = try intercepted.plugin(FunctionPlugin<NoConfig>(name: "child") { _, _, scope in scope.ctx.logger.debug("from a plugin under it") })
        try await child.await()
        let nearer = intercepted.intercept(LoggerIntercept.self, .init(name: "nearer"))
        nearer.logger.debug("nearer")
        #expect(received.messages.map(\.name) == ["root", "intercepted", "custom", "explicit", "intercepted", "nearer"])
    }

    @Test func aLoaderEntryCarriesTheInterceptAsJSONAndABadLevelIsAClearError() throws {
        let root = Context(logLevel: .error)
        let received = Received()
        try root.logger.exporter(ClosureExporter(level: .debug) { received.messages.append($0) })
        let json = root.intercept(name: LoggerIntercept.name, ["name": "from-json", "level": "warn"])
        #expect(json.logger.name == "from-json")
        #expect(json.logger.level == .warn)
        let bad = root.intercept(name: LoggerIntercept.name, ["level": "loud"])
        #expect(bad.logger.name == "root")
        #expect(received.messages.last?.level == .error)
        #expect(received.messages.last?.text.contains("level must be error, warn, info or debug, not loud") == true)
    }

    @Test func theBufferKeepsMessagesAtTheLoggersLevelAndItsSizeDropsTheOldest() throws {
        let root = Context(logLevel: .error)
        root.logger.debug("below the logger's level")
        root.logger.info("one")
        #expect(root.logger.buffer.map(\.text) == ["one"])
        #expect(root.recentLogs.map(\.text) == ["below the logger's level", "one"], "recentLogs keeps every level")
        root.intercept(LoggerIntercept.self, .init(level: .debug)).logger.debug("verbose")
        #expect(root.logger.buffer.map(\.text) == ["one", "verbose"])

        root.logger.bufferSize = 2
        #expect(root.logger.bufferSize == 2)
        #expect(root.logger.buffer.map(\.text) == ["one", "verbose"])
        root.logger.info("two")
        root.logger.info("three")
        #expect(root.logger.buffer.map(\.text) == ["two", "three"])
        root.logger.bufferSize = 1
        #expect(root.logger.buffer.map(\.text) == ["three"], "shrinking drops the oldest at once")
        root.logger.info("four")
        #expect(root.logger.buffer.map(\.text) == ["four"])
        root.logger.bufferSize = 0
        root.logger.info("five")
        #expect(root.logger.buffer.isEmpty)
        #expect(root.recentLogs.isEmpty)
        root.logger.bufferSize = 3
        root.logger.info("six")
        #expect(root.logger.buffer.map(\.text) == ["six"])
    }
}
