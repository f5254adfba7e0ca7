/// What one decoding run shares between its containers: the issues found, the keys each object had
/// and the ones the type read, and, when probing a schema, the fields met.
final class DecodingState {
    enum Mode {
        /// Decode a real value and report every problem.
        case strict
        /// No value: answer every request with a placeholder and record what was asked.
        case probe
    }

    /// One object met while decoding, with the members read from it (by position).
    final class ObjectUse {
        let path: [ConfigPathComponent]
        let object: JSONObject
        /// The first 64 members' marks, one bit each (most objects need no more).
        private var readBits: UInt64 = 0
        /// The marks of members from the 65th on, allocated only for objects that have them.
        private var readBeyond: [Bool]

        init(path: [ConfigPathComponent], object: JSONObject) {
            self.path = path
            self.object = object
            self.readBeyond = object.count > 64 ? Array(repeating: false, count: object.count - 64) : []
        }

        /// Marks `key` as read (a key the object does not have needs no mark: it cannot be unknown).
        func markRead(_ key: String) {
            if let position = object.position(of: key) { markRead(at: position) }
        }

        /// Marks the member at `position` of the object as read.
        func markRead(at position: Int) {
            if position < 64 {
                readBits |= 1 << UInt64(position)
            } else {
                readBeyond[position - 64] = true
            }
        }

        private func isRead(_ position: Int) -> Bool {
            position < 64 ? readBits & (1 << UInt64(position)) != 0 : readBeyond[position - 64]
        }

        /// Whether the type left a key unread (checked without building the list of them).
        var hasUnread: Bool {
            let count = object.count
            let bits = count >= 64 ? UInt64.max : (1 << UInt64(count)) - 1
            return readBits & bits != bits || readBeyond.contains(false)
        }

        /// The keys the type never read, in order.
        var unread: [String] {
            object.indices.compactMap { isRead($0) ? nil : object[$0].key }
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

    /// How many objects are looked up by scanning before they are indexed by path.
    private static let scannedObjects = 8

    /// The use record for the object at `path`, shared by every container opened on it.
    func objectUse(at codingPath: [any CodingKey], object: JSONObject) -> ObjectUse {
        let path = codingPath.configPath
        // Most values hold a few objects: a scan finds one without hashing its path.
        if objects.count <= Self.scannedObjects {
            if let existing = objects.first(where: { $0.path == path }) { return existing }
        } else if let existing = objectsByPath[path] {
            return existing
        }
        let use = ObjectUse(path: path, object: object)
        objects.append(use)
        if objects.count == Self.scannedObjects + 1 {
            for earlier in objects { objectsByPath[earlier.path] = earlier }
        } else if objects.count > Self.scannedObjects + 1 {
            objectsByPath[path] = use
        }
        return use
    }

    /// An issue for each key of each object met that the type never read, skipping the objects on
    /// the way to `failurePath` (their decoding stopped early).
    func unknownKeyIssues(excludingAncestorsOf failurePath: [ConfigPathComponent]?) -> [ConfigError.Issue] {
        var found: [ConfigError.Issue] = []
        for object in objects where object.hasUnread {
            if let failurePath, failurePath.starts(with: object.path) { continue }
            for key in object.unread {
                found.append(ConfigError.Issue(code: .unknownKey, path: object.path + [.key(key)], message: "unknown key \"\(key)\""))
            }
        }
        return found
    }
}
