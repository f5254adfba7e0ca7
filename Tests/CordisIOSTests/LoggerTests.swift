import Cordis
import Testing

/// Ports cordis-ios's `Tests/CordisTests/LoggerTests.swift`: the logger's bounded buffer, exporters as
/// effects, and how a logger is named.
@Suite("LoggerTests")
@CordisActor
struct LoggerTests {
    /// A new world whose every message, debug included, is captured.
    private func capturing() throws -> (ctx: Context, captured: Recorder<LogMessage>) {
        let ctx = Context()
        let captured = Recorder<LogMessage>()
        try ctx.logger.exporter(ClosureExporter(level: .debug) { captured.record($0) })
        return (ctx, captured)
    }

    /// Ports cordis-ios LoggerTests "keeps the bounded buffer in place and chronological".
    @Test("keeps the bounded buffer in place and chronological")
    func theBufferKeepsTheNewestMessagesInOrder() {
        let ctx = Context()
        ctx.logger.bufferSize = 2
        ctx.logger.info("one")
        ctx.logger.info("two")
        ctx.logger.info("three")
        #expect(ctx.logger.buffer.map(\.text) == ["two", "three"])

        ctx.logger.bufferSize = 1
        ctx.logger.info("four")
        #expect(ctx.logger.buffer.map(\.text) == ["four"])

        ctx.logger.bufferSize = 0
        ctx.logger.info("five")
        #expect(ctx.logger.buffer.isEmpty)
    }

    /// Ports cordis-ios LoggerTests "disposes the exporter that registered the disposer".
    @Test("disposes the exporter that registered the disposer")
    func disposingAnExportersHandleRemovesThatExporterOnly() async throws {
        let ctx = Context()
        let first = Recorder<LogMessage>()
        let second = Recorder<LogMessage>()
        let firstExporter = try ctx.logger.exporter(ClosureExporter { first.record($0) })
        let secondExporter = try ctx.logger.exporter(ClosureExporter { second.record($0) })

        try await firstExporter.dispose()
        ctx.logger.info("test")
        #expect(first.count == 0)
        #expect(second.count == 1)

        try await secondExporter.dispose()
        ctx.logger.info("test")
        #expect(second.count == 1)
    }

    /// Ports cordis-ios LoggerTests "uses fiber name when called from outside any service".
    @Test("uses fiber name when called from outside any service")
    func aLoggerIsNamedAfterItsFiber() throws {
        let (ctx, captured) = try capturing()
        ctx.logger.debug("hello")
        #expect(captured.calls.map(\.name) == ["root"])
    }

    /// Ports cordis-ios LoggerTests "honours explicit name argument".
    @Test("honours explicit name argument")
    func aNamedLoggerUsesTheNameGiven() throws {
        let (ctx, captured) = try capturing()
        ctx.logger.named("custom").debug("hello")
        #expect(captured.calls.map(\.name) == ["custom"])
    }

    /// Ports cordis-ios LoggerTests "honours intercept name".
    @Test("honours intercept name")
    func aLoggerUnderALoggerInterceptUsesItsName() throws {
        let (ctx, captured) = try capturing()
        ctx.intercept(LoggerIntercept.self, .init(name: "intercepted")).logger.debug("hello")
        #expect(captured.calls.map(\.name) == ["intercepted"])
    }
}
