/// Decodes any `Decodable` from a `JSONValue`, strictly: wrong JSON types, missing keys and keys the
/// type never reads are all errors, reported together as a `ConfigError` whose issues name their path.
///
/// A key counts as read when the type asks for it with `decode`, `decodeIfPresent` or `contains`
/// (and every key of a `[String: X]` dictionary is read). After a problem the decoder goes on with a
/// placeholder value (zero, empty, the first case of a `CaseIterable` enum) to find the others; an
/// error thrown by the type itself (`init(from:)` validation) is reported too and stops the decoding.
/// A `JSONValue` member is taken as is. Integers decode into any integer type they fit; any number
/// decodes into `Double` or `Float`; `null` is accepted only for optionals.
public struct JSONValueDecoder: Sendable {
    /// Values handed to the decoded types through `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// A decoder with the given user info.
    public init(userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.userInfo = userInfo
    }

    /// Decodes a `T` from `value`. Throws `ConfigError` listing every problem found.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        let state = DecodingState(mode: .strict, userInfo: userInfo)
        let decoder = ValueDecoder(state: state, value: value, codingPath: [])
        let result: T
        do {
            result = try decoder.decodeValue(T.self)
        } catch {
            var issues = state.issues
            let thrown = ConfigError.Issue(decodingError: error)
            // An error under a spot already reported comes from its placeholder: drop it.
            let explained = issues.contains { thrown.path.starts(with: $0.path) }
            if !explained { issues.append(thrown) }
            issues.append(contentsOf: state.unknownKeyIssues(excludingAncestorsOf: thrown.path))
            throw ConfigError(issues: issues)
        }
        let unknown = state.unknownKeyIssues(excludingAncestorsOf: nil)
        guard state.issues.isEmpty, unknown.isEmpty else { throw ConfigError(issues: state.issues + unknown) }
        return result
    }

    /// Decodes a `T` from `document`, with the same result and the same errors as `decode(_:from:)`
    /// on its value. A document read from bytes is decoded from its flat form, without building the
    /// value, whenever it decodes cleanly; otherwise (and for a document of a value) the value is
    /// decoded as above, which names every problem. Throws `ConfigError`.
    public func decode<T: Decodable>(_ type: T.Type, from document: JSONDocument) throws -> T {
        if case .tape(let tape) = document.storage {
            do {
                return try TapeDecoding.decode(T.self, tape: tape, userInfo: userInfo)
            } catch {
                // Not clean: the strict decoder below names the problems.
            }
        }
        return try decode(type, from: document.value)
    }
}

extension ConfigError.Issue {
    /// Describes an error thrown while decoding (a `DecodingError` or anything else) as an issue.
    init(decodingError error: any Error) {
        if let decodingError = error as? DecodingError {
            switch decodingError {
            case .typeMismatch(_, let context), .valueNotFound(_, let context):
                self.init(code: .typeMismatch, path: context.codingPath.configPath, message: context.debugDescription)
            case .keyNotFound(let key, let context):
                self.init(
                    code: .missingKey, path: (context.codingPath + [key]).configPath,
                    message: "missing required key \"\(key.stringValue)\"")
            case .dataCorrupted(let context):
                self.init(code: .invalidValue, path: context.codingPath.configPath, message: context.debugDescription)
            @unknown default:
                self.init(code: .invalidValue, path: [], message: "\(decodingError)")
            }
        } else {
            self.init(code: .invalidValue, path: [], message: "\(error)")
        }
    }
}

extension Array where Element == any CodingKey {
    /// The coding path as config path components (indices of unkeyed containers become `.index`).
    var configPath: [ConfigPathComponent] {
        map { key in
            if let index = key as? IndexKey { return .index(index.index) }
            return .key(key.stringValue)
        }
    }
}

/// The coding key of an array element.
struct IndexKey: CodingKey {
    var index: Int
    init(_ index: Int) { self.index = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { index = intValue }
    var stringValue: String { "[\(index)]" }
    var intValue: Int? { index }
}

/// The coding key of an object member whose name is only known at run time.
struct NameKey: CodingKey {
    var stringValue: String
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { stringValue = String(intValue) }
    var intValue: Int? { nil }
}
