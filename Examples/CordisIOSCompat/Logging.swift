import Cordis

/// A custom exporter as a cordis-ios app writes one: an optional level, `export` on the actor.
struct LineCollector: LogExporter {
  let level: LogLevel?

  @CordisActor func export(_ message: LogMessage) {
    say("collected [\(message.level)] \(message.name): \(message.text)")
  }
}

@CordisActor
func customExportersAndLoggerState(_ root: Context) async throws {
  say("== custom exporters, LoggerIntercept, logger buffer")
  // A custom exporter without a level follows the logger's level (info unless an intercept sets one).
  let collecting = FunctionPlugin<NoConfig>(name: "collecting") { ctx, _, _ in
    try ctx.logger.exporter(LineCollector(level: nil))
  }
  let collector = try root.plugin(collecting)
  try await collector.await()
  root.logger.debug("below the default level: not collected")
  root.logger.info("at the default level")

  // LoggerIntercept names and levels the loggers under it; an explicit name still wins.
  let weather = root.intercept(LoggerIntercept.self, .init(name: "weather", level: .debug))
  weather.logger.debug("debug under a debug intercept")
  weather.logger.named("radar").info("an explicit name")
  let station = try weather.plugin(FunctionPlugin<NoConfig>(name: "station") { ctx, _, _ in
    ctx.logger.info("a plugin under the intercept logs as \(ctx.logger.name)")
  })
  try await station.await()
  try await station.dispose()
  try await collector.dispose()
  root.logger.warn("after unload: not collected")

  // The buffer keeps recent messages at the logger's level, bufferSize of them.
  let size = root.logger.bufferSize
  root.logger.bufferSize = 2
  root.logger.info("one")
  root.logger.debug("below the level: not buffered")
  root.logger.info("two")
  root.logger.info("three")
  say("buffer \(root.logger.buffer.map(\.text)), size \(root.logger.bufferSize)")
  root.logger.bufferSize = 0
  root.logger.info("four")
  say("buffer with size 0: \(root.logger.buffer.count) messages")
  root.logger.bufferSize = size
}
