import CordisJSON

#if canImport(Glibc)
import Glibc
#endif

/// Reads `cordis-node`'s command line and its `--config` file into a `NodeCommand`.
///
/// Flags take `--flag value` or `--flag=value`; a value that starts with `--` is taken for the next
/// flag, so write `--flag=--value` for such a value. `--help` and `--version` anywhere answer at once.
/// A config file's keys are the long flag names without dashes; flags override it, and a list flag given
/// on the command line replaces the file's whole list. Paths are kept as written (relative ones are
/// relative to the working directory, also inside a config file). Everything refused throws
/// `NodeOptionsError`, whose exit code is 64.
public struct NodeOptionsParser: Sendable {
    /// Reads a whole file at a path; throws when it cannot (its description becomes part of the message).
    public typealias FileReader = @Sendable (String) throws -> [UInt8]

    /// The largest config file read: 1 MiB.
    public static let maximumConfigBytes = 1 << 20

    /// The program name used in the usage text and the version line.
    public var programName: String
    /// How the `--config` file is read; the file system by default, replaceable in tests.
    public var readFile: FileReader

    /// A parser for `programName` that reads config files with `readFile`.
    public init(programName: String = "cordis-node", readFile: @escaping FileReader = NodeOptionsParser.readFile(atPath:)) {
        self.programName = programName
        self.readFile = readFile
    }

    /// Parses the arguments after the program name (`CommandLine.arguments.dropFirst()`).
    ///
    /// - Returns: `.help` or `.version` when asked for, else `.run` with validated options.
    /// - Throws: `NodeOptionsError` (exit code 64) naming the flag, value or config key at fault.
    public func parse(_ arguments: some Sequence<String>) throws(NodeOptionsError) -> NodeCommand {
        let arguments = Array(arguments)
        for argument in arguments {
            if argument == NodeFlag.help.spelling { return .help(NodeUsage.text(programName: programName)) }
            if argument == NodeFlag.version.spelling { return .version("\(programName) \(CordisVersion.current)") }
        }
        let commandLine = try parseCommandLine(arguments)
        var settings = commandLine
        if let path = commandLine.config {
            settings = commandLine.overriding(try parseConfig(atPath: path))
        }
        return .run(try settings.resolve())
    }

    /// The settings given on the command line alone, each value checked, nothing merged or defaulted.
    func parseCommandLine(_ arguments: [String]) throws(NodeOptionsError) -> NodeSettings {
        var settings = NodeSettings()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                if argument.hasPrefix("-"), argument.count > 1 { throw Self.unknownFlag(argument) }
                throw NodeOptionsError(
                    .unexpectedArgument, "unexpected argument \(Self.quoted(argument)); every setting is a --flag")
            }
            let body = argument.dropFirst(2)
            let name: String
            let inlineValue: String?
            if let equals = body.firstIndex(of: "=") {
                name = String(body[..<equals])
                inlineValue = String(body[body.index(after: equals)...])
            } else {
                name = String(body)
                inlineValue = nil
            }
            guard let flag = NodeFlag(longName: name) else { throw Self.unknownFlag("--\(name)") }
            switch flag.arity {
            case .action:
                throw NodeOptionsError(.unexpectedValue, "\(flag.spelling) takes no value")
            case .toggle:
                guard let inlineValue else {
                    try Self.apply(flag, "true", to: &settings)
                    continue
                }
                try Self.apply(flag, inlineValue, to: &settings)
            case .single, .repeated:
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                        throw NodeOptionsError(.missingValue, "\(flag.spelling) needs a value: \(flag.synopsis)")
                    }
                    value = arguments[index]
                    index += 1
                }
                if flag.arity == .single, settings.has(flag) {
                    throw NodeOptionsError(.repeatedFlag, "\(flag.spelling) is given twice; it takes one value")
                }
                try Self.apply(flag, value, to: &settings)
            }
        }
        return settings
    }

    /// The settings of the config file at `path`.
    func parseConfig(atPath path: String) throws(NodeOptionsError) -> NodeSettings {
        let bytes: [UInt8]
        do {
            bytes = try readFile(path)
        } catch {
            throw NodeOptionsError(.configUnreadable, "cannot read config file \(path): \(error)", underlying: error)
        }
        let document: JSONValue
        do {
            document = try JSONParser().parse(bytes)
        } catch let error as JSONParseError {
            throw NodeOptionsError(
                .configSyntax, "config file \(path) is not valid JSON: \(error.message)", underlying: error)
        } catch {
            throw NodeOptionsError(.configSyntax, "config file \(path) is not valid JSON: \(error)", underlying: error)
        }
        guard case .object(let object) = document else {
            throw NodeOptionsError(
                .configSyntax,
                "config file \(path) must hold a JSON object of settings (like {\"name\": \"a\"}), not \(Self.withArticle(document.kindName))")
        }
        let keys = NodeFlag.allCases.compactMap(\.configKey)
        var settings = NodeSettings()
        for (key, value) in object {
            guard let flag = NodeFlag(longName: key), flag.configKey != nil else {
                if NodeFlag(longName: key) != nil {
                    throw NodeOptionsError(.unknownKey, "config file \(path): \"\(key)\" cannot be set in a config file")
                }
                var message = "config file \(path): unknown key \(Self.quoted(key))"
                if let suggestion = NodeFlag.suggestion(for: key, among: keys) {
                    message += " (did you mean \"\(suggestion)\"?)"
                }
                throw NodeOptionsError(.unknownKey, message)
            }
            do {
                try settings.apply(flag, json: value)
            } catch {
                switch error {
                case .wrongType(let keyPath, let expected, let found):
                    throw NodeOptionsError(
                        .wrongType, "config file \(path): \(keyPath) must be \(expected), not \(Self.withArticle(found))")
                case .invalid(let keyPath, let text, let reason):
                    throw NodeOptionsError(.invalidValue, "config file \(path): invalid \(keyPath) \(text): \(reason)")
                }
            }
        }
        return settings
    }

    /// Reads a whole regular file (or a symlink to one) through the file system, up to
    /// `maximumConfigBytes`. It is opened without blocking, so a FIFO, a folder or a device is refused
    /// at once rather than waited on or read.
    ///
    /// - Throws: an error whose description is the system's reason (`No such file or directory`), or
    ///   says the file is not a regular file or is too large.
    @Sendable public static func readFile(atPath path: String) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileReadFailure(errno: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw FileReadFailure(errno: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw FileReadFailure(reason: "not a regular file (a folder, FIFO, socket or device)")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= maximumConfigBytes {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileReadFailure(errno: errno)
            }
            bytes.append(contentsOf: chunk.prefix(count))
        }
        throw FileReadFailure(reason: "larger than \(maximumConfigBytes) bytes")
    }

    /// Sets one flag's value, turning a refused value into `invalidValue`.
    private static func apply(_ flag: NodeFlag, _ value: String, to settings: inout NodeSettings) throws(NodeOptionsError) {
        do {
            try settings.apply(flag, text: value)
        } catch {
            throw NodeOptionsError(.invalidValue, "invalid \(flag.spelling) \(quoted(value)): \(error.reason)")
        }
    }

    /// The error for an unknown flag, with the nearest known flag as a hint.
    private static func unknownFlag(_ spelling: String) -> NodeOptionsError {
        let bare = String(spelling.drop(while: { $0 == "-" }))
        var message = "unknown flag \(quoted(spelling, always: false))"
        if let suggestion = NodeFlag.suggestion(for: bare, among: NodeFlag.allCases.map(\.rawValue)) {
            message += " (did you mean --\(suggestion)?)"
        }
        return NodeOptionsError(.unknownFlag, message)
    }

    /// A JSON kind with its article: `an array`, `a string`.
    private static func withArticle(_ kind: String) -> String {
        guard let first = kind.first else { return kind }
        return "aeiou".contains(first) ? "an \(kind)" : "a \(kind)"
    }

    /// A value for a message: in double quotes, at most 200 characters.
    private static func quoted(_ value: String, always: Bool = true) -> String {
        let shown = value.count > 200 ? value.prefix(200) + "…" : Substring(value)
        guard always || shown.contains(where: { $0 == " " || $0 == "\"" || $0.isNewline }) else { return String(shown) }
        return "\"\(shown)\""
    }
}

/// Why `NodeOptionsParser.readFile(atPath:)` could not read a file: the system's reason.
private struct FileReadFailure: Error, CustomStringConvertible {
    var description: String

    init(errno number: Int32) {
        description = strerror(number).map { String(cString: $0) } ?? "errno \(number)"
    }

    init(reason: String) {
        description = reason
    }
}
