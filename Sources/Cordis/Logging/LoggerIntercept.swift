/// The intercept that names and levels the loggers of a subtree (cordis-ios's `LoggerIntercept`):
/// `ctx.intercept(LoggerIntercept.self, .init(name: "weather", level: .debug))`.
///
/// A logger's name is an explicit one (`ctx.logger("x")`, `named(_:)`), else the nearest intercept's
/// `name`, else its fiber's name. Its level is the nearest intercept's `level` (`info` when none sets
/// one): it chooses which records enter its `buffer` and which go to exporters whose own level is nil.
/// Exporters and sinks with a level of their own take their level whatever the logger's.
/// A Loader entry carries it as `"intercept": {"logger": {"name": "x", "level": "debug"}}`.
public enum LoggerIntercept: InterceptKey {
    /// What the intercept sets: a name, a level, or both.
    public struct Config: Sendable, Hashable, Decodable {
        /// The name of the loggers under the intercept (nil: their fiber's name).
        public var name: String?
        /// The level of the loggers under the intercept (nil: `info`). The nearest intercept's config is
        /// the whole config: a nearer one that sets only a name brings the level back to `info`.
        public var level: LogLevel?

        /// Creates a config.
        public init(name: String? = nil, level: LogLevel? = nil) {
            self.name = name
            self.level = level
        }

        private enum CodingKeys: String, CodingKey {
            case name, level
        }

        /// Decodes `name` and `level` (`error`, `warn`, `info` or `debug`).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decodeIfPresent(String.self, forKey: .name)
            guard let text = try container.decodeIfPresent(String.self, forKey: .level) else { return }
            guard let level = LogLevel(name: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .level, in: container, debugDescription: "level must be error, warn, info or debug, not \(text)")
            }
            self.level = level
        }
    }

    /// The intercept's name, `logger`.
    public static let name = "logger"
}
