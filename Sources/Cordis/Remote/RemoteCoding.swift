/// Helpers the code `@Remote` generates uses to move arguments and results through JSON.
public enum RemoteCoding {
    /// Encodes an argument or a result.
    ///
    /// - Throws: `RemoteCallError` `.invalidArguments` when it cannot be encoded.
    public static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        do {
            return try JSONValueEncoder().encode(value)
        } catch {
            throw RemoteCallError(.invalidArguments, "cannot encode \(T.self): \(error)")
        }
    }

    /// Decodes argument `label` of `method` from a call's argument object.
    ///
    /// - Throws: `RemoteCallError` `.invalidArguments` naming the method, the argument and the problem.
    public static func argument<T: Decodable>(
        _ type: T.Type, _ label: String, of method: String, in arguments: JSONObject
    ) throws -> T {
        do {
            return try JSONValueDecoder().decode(T.self, from: arguments[label] ?? .null)
        } catch {
            throw RemoteCallError(.invalidArguments, "\(method): argument \(label): \(problem(error))")
        }
    }

    /// Decodes the result of `method`.
    ///
    /// - Throws: `RemoteCallError` `.invalidArguments` when it does not decode as `T`.
    public static func result<T: Decodable>(_ type: T.Type, of method: String, from value: JSONValue) throws -> T {
        do {
            return try JSONValueDecoder().decode(T.self, from: value)
        } catch {
            throw RemoteCallError(.invalidArguments, "\(method): result: \(problem(error))")
        }
    }

    /// Decodes the result of `method` as read, from its flat form when it decodes cleanly (see
    /// `JSONValueDecoder.decode(_:from:)`).
    ///
    /// - Throws: `RemoteCallError` `.invalidArguments` when it does not decode as `T`.
    public static func result<T: Decodable>(_ type: T.Type, of method: String, from document: JSONDocument) throws -> T {
        do {
            return try JSONValueDecoder().decode(T.self, from: document)
        } catch {
            throw RemoteCallError(.invalidArguments, "\(method): result: \(problem(error))")
        }
    }

    /// A decoding failure on one line: each problem with its path inside the value (none for the
    /// value itself), separated by `; `.
    private static func problem(_ error: any Error) -> String {
        guard let config = error as? ConfigError, !config.issues.isEmpty else { return "\(error)" }
        return config.issues.map { issue in
            issue.path.isEmpty ? issue.message : "\(issue.message) (at \(issue.pathDescription))"
        }.joined(separator: "; ")
    }

    /// The error for a method the interface does not have.
    public static func unknownMethod(_ method: String, in interface: String) -> RemoteCallError {
        RemoteCallError(.unknownMethod, "interface \(interface) has no method \(method)")
    }
}
