import CordisJSON

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a Loader reads the environment variables that entry configs reference, and how it resolves
/// those references.
///
/// In an entry's `config`, an object of the form `{"$env": "NAME"}` or `{"$env": "NAME", "default":
/// VALUE}` stands for the variable's value, as a JSON string (or `VALUE`, any JSON, when the variable is
/// not set). The entries file keeps the reference; only the plugin's config gets the value, resolved
/// each time the entry's config is checked or its fiber starts or updates.
public struct ConfigEnvironment: Sendable {
    private let lookup: @Sendable (String) -> String?

    /// An environment that reads variables through `lookup` (a test passes a dictionary's lookup).
    public init(_ lookup: @escaping @Sendable (String) -> String?) {
        self.lookup = lookup
    }

    /// The process's own environment.
    public static let process = ConfigEnvironment { name in
        getenv(name).map { String(cString: $0) }
    }

    /// `config` with every environment reference replaced by its value.
    ///
    /// - Throws: `ConfigError` listing every reference that cannot be resolved, each at its path: an
    ///   unset variable without a default, or a malformed reference (a name that is not a non-empty
    ///   string without `=`, or keys other than `$env` and `default`).
    public func resolve(_ config: JSONValue) throws -> JSONValue {
        var issues: [ConfigError.Issue] = []
        var path: [ConfigPathComponent] = []
        let resolved = resolve(config, path: &path, issues: &issues, depth: 0)
        guard issues.isEmpty else { throw ConfigError(issues: issues) }
        return resolved
    }

    /// The key that marks a reference.
    static let referenceKey = "$env"

    private func resolve(
        _ value: JSONValue, path: inout [ConfigPathComponent], issues: inout [ConfigError.Issue], depth: Int
    ) -> JSONValue {
        // The parser already bounds nesting (512); this only keeps a hand-built value from recursing deeper.
        guard depth < 1_024 else { return value }
        switch value {
        case .object(let object):
            if object.contains(key: Self.referenceKey) {
                return reference(object, path: path, issues: &issues)
            }
            var result = JSONObject()
            result.reserveCapacity(object.count)
            for (key, member) in object {
                path.append(.key(key))
                result[key] = resolve(member, path: &path, issues: &issues, depth: depth + 1)
                path.removeLast()
            }
            return .object(result)
        case .array(let elements):
            var result: [JSONValue] = []
            result.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                path.append(.index(index))
                result.append(resolve(element, path: &path, issues: &issues, depth: depth + 1))
                path.removeLast()
            }
            return .array(result)
        default:
            return value
        }
    }

    private func reference(_ object: JSONObject, path: [ConfigPathComponent], issues: inout [ConfigError.Issue]) -> JSONValue {
        func refuse(_ message: String) -> JSONValue {
            issues.append(ConfigError.Issue(code: .invalidValue, path: path, message: message))
            return .null
        }
        if let extra = object.keys.first(where: { $0 != Self.referenceKey && $0 != "default" }) {
            return refuse("an environment reference takes only \"$env\" and \"default\", not \"\(extra)\"")
        }
        guard case .string(let name)? = object[Self.referenceKey], !name.isEmpty,
              !name.contains("="), !name.contains("\0")
        else {
            return refuse("\"$env\" takes the name of an environment variable (a non-empty string without \"=\")")
        }
        if let value = lookup(name) { return .string(value) }
        if let fallback = object["default"] { return fallback }
        return refuse("environment variable \"\(name)\" is not set and the reference has no default")
    }
}
