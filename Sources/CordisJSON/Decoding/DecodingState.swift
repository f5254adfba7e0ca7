/// What one decoding run shares between its containers: the issues found, the keys each object had
/// and the ones the type read, and, when probing a schema, the fields met.
final class DecodingState {
    enum Mode {
        /// Decode a real value and report every problem.
        case strict
        /// No value: answer every request with a placeholder and record what was asked.
        case probe
    }

    /// One container opened on an object while decoding, with the members read through it (by
    /// position). A type that opens several containers on one object gets one record for each; their
    /// reads are put together only when one of them left a member unread (`unknownKeyIssues`).
    final class ObjectUse {
        /// Where the object is; its config path is built only when asked for.
        let codingPath: [any CodingKey]
        private var cachedPath: [ConfigPathComponent]?
        let object: JSONObject
        /// The first 64 members' marks, one bit each (most objects need no more).
        private var readBits: UInt64 = 0
        /// The marks of members from the 65th on, allocated only for objects that have them.
        private var readBeyond: [Bool]

        init(codingPath: [any CodingKey], object: JSONObject) {
            self.codingPath = codingPath
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

        /// The object's path as issues name it.
        var path: [ConfigPathComponent] {
            if let cachedPath { return cachedPath }
            let path = codingPath.configPath
            cachedPath = path
            return path
        }

        fileprivate func isRead(_ position: Int) -> Bool {
            position < 64 ? readBits & (1 << UInt64(position)) != 0 : readBeyond[position - 64]
        }

        /// Takes the reads of `other`, a container on the same object, as this one's too.
        fileprivate func markRead(from other: ObjectUse) {
            readBits |= other.readBits
            for index in readBeyond.indices where other.readBeyond[index] { readBeyond[index] = true }
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

        /// A record of the same reads, for putting several containers' reads together.
        fileprivate func copy() -> ObjectUse {
            let copy = ObjectUse(codingPath: codingPath, object: object)
            copy.markRead(from: self)
            return copy
        }
    }

    let mode: Mode
    let userInfo: [CodingUserInfoKey: Any]
    var issues: [ConfigError.Issue] = []
    private var objects: [ObjectUse] = []
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

    /// A new record of reads for a container opened on the object at `codingPath`. Nothing is looked
    /// up here: most types open one container per object and read every member through it, so the
    /// records are compared by path only when one has members left unread.
    func objectUse(at codingPath: [any CodingKey], object: JSONObject) -> ObjectUse {
        let use = ObjectUse(codingPath: codingPath, object: object)
        objects.append(use)
        return use
    }

    /// An issue for each key of each object met that the type never read, skipping the objects on
    /// the way to `failurePath` (their decoding stopped early).
    func unknownKeyIssues(excludingAncestorsOf failurePath: [ConfigPathComponent]?) -> [ConfigError.Issue] {
        guard objects.contains(where: \.hasUnread) else { return [] }
        // The records put together per object (by path, in the order the objects were first opened):
        // a member read through any container of its object is known.
        var merged: [ObjectUse] = []
        var byPath: [[ConfigPathComponent]: ObjectUse] = [:]
        for use in objects {
            if let existing = byPath[use.path] {
                existing.markRead(from: use)
            } else {
                let record = use.copy()
                byPath[use.path] = record
                merged.append(record)
            }
        }
        var found: [ConfigError.Issue] = []
        for object in merged where object.hasUnread {
            if let failurePath, failurePath.starts(with: object.path) { continue }
            for key in object.unread {
                found.append(ConfigError.Issue(code: .unknownKey, path: object.path + [.key(key)], message: "unknown key \"\(key)\""))
            }
        }
        return found
    }
}
