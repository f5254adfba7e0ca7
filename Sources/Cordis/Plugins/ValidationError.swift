import CordisJSON

/// One problem a plugin's `validate` found in a config (cordis-ios's `ValidationIssue`): what is wrong,
/// and the path of keys where it is (empty for the config as a whole).
public struct ValidationIssue: Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, without the path (`must not be empty`).
    public let message: String
    /// The keys from the config's root to the value at fault; empty for the whole config.
    public let path: [String]

    /// Creates an issue at `path` (the whole config by default).
    public init(message: String, path: [String] = []) {
        self.message = message
        self.path = path
    }

    /// `message (at a.b)`, or only the message when the path is empty.
    public var description: String {
        path.isEmpty ? message : "\(message) (at \(path.joined(separator: ".")))"
    }
}

/// A config refused by a plugin's `validate`, with every problem found (cordis-ios's `ValidationError`).
///
/// Throw it from `static func validate(_:)` (or a `FunctionPlugin`'s `validate`) to report several
/// problems at once: `ctx.plugin`, `fiber.update` and the Loader report it as `CordisError`
/// `.invalidConfig` (a Loader change as `LoaderError` `.invalidConfig`), whose message is
/// `plugin "P": invalid config:` then one `  - message (at path)` line per issue.
public struct ValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The problems found, in the order found.
    public let issues: [ValidationIssue]

    /// Creates an error from its issues.
    public init(issues: [ValidationIssue]) {
        self.issues = issues
    }

    /// `invalid config:` then one `  - message (at path)` line per issue.
    public var description: String {
        (["invalid config:"] + issues.map { "  - \($0)" }).joined(separator: "\n")
    }
}

extension CordisError {
    /// The error for a config that `validate` refused with `error`: `plugin "P": invalid config: …`.
    ///
    /// A `ValidationError` or a `ConfigError` already reads `invalid config:` with one line per problem,
    /// so it follows the plugin's name as it is; any other error is the text after `invalid config: `.
    static func refusedConfig(plugin: String, _ error: any Error) -> CordisError {
        switch error {
        case let validation as ValidationError:
            return CordisError(.invalidConfig, "plugin \"\(plugin)\": \(validation)")
        case let config as ConfigError:
            return CordisError(.invalidConfig, "plugin \"\(plugin)\": \(config)")
        default:
            return CordisError(.invalidConfig, "plugin \"\(plugin)\": invalid config: \(error)")
        }
    }
}
