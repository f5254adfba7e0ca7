/// What one decoding run shares between its containers: the issues found, the keys each object had
/// and the ones the type read, and, when probing a schema, the fields met.
final class DecodingState {
    enum Mode {
        /// Decode a real value and report every problem.
        case strict
        /// No value: answer every request with a placeholder and record what was asked.
        case probe
    }

    /// One object met while decoding, with the keys read from it.
    final class ObjectUse {
        let path: [ConfigPathComponent]
        let keys: [String]
        var used: Set<String> = []
        init(path: [ConfigPathComponent], keys: [String]) {
            self.path = path
            self.keys = keys
        }
    }

    let mode: Mode
    let userInfo: [CodingUserInfoKey: Any]
    var issues: [ConfigError.Issue] = []
    private var objects: [ObjectUse] = []
    private var objectsByPath: [[ConfigPathComponent]: ObjectUse] = [:]
    /// The schema being gathered in probe mode.
    var recorder = SchemaRecorder()
    /// The non-primitive types being probed, outermost first, to stop recursive types.
    var probeStack: [ObjectIdentifier] = []

    init(mode: Mode, userInfo: [CodingUserInfoKey: any Sendable]) {
        self.mode = mode
        var info: [CodingUserInfoKey: Any] = [:]
        for (key, value) in userInfo { info[key] = value }
        self.userInfo = info
    }

    func record(_ code: ConfigError.Issue.Code, _ message: String, at codingPath: [any CodingKey]) {
        issues.append(ConfigError.Issue(code: code, path: codingPath.configPath, message: message))
    }

    /// The use record for the object at `path`, shared by every container opened on it.
    func objectUse(at codingPath: [any CodingKey], object: JSONObject) -> ObjectUse {
        let path = codingPath.configPath
        if let existing = objectsByPath[path] { return existing }
        let use = ObjectUse(path: path, keys: object.keys)
        objects.append(use)
        objectsByPath[path] = use
        return use
    }

    /// An issue for each key of each object met that the type never read, skipping the objects on
    /// the way to `failurePath` (their decoding stopped early).
    func unknownKeyIssues(excludingAncestorsOf failurePath: [ConfigPathComponent]?) -> [ConfigError.Issue] {
        var found: [ConfigError.Issue] = []
        for object in objects {
            if let failurePath, failurePath.starts(with: object.path) { continue }
            for key in object.keys where !object.used.contains(key) {
                found.append(ConfigError.Issue(code: .unknownKey, path: object.path + [.key(key)], message: "unknown key \"\(key)\""))
            }
        }
        return found
    }
}
