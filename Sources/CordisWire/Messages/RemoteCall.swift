import CordisJSON

/// A call of a remote service's method; answered by a `result` or an `error` with the same `id`.
public struct RemoteCall: Sendable, Hashable {
    /// The caller's id for this call, unique among its calls in flight on the link.
    public var id: Int
    /// The service name.
    public var service: String
    /// The shared realm label, or nil for the root realm.
    public var realm: String?
    /// The method name.
    public var method: String
    /// The arguments keyed by label (`_0`, `_1`… for unlabelled ones).
    public var args: JSONObject

    /// A call.
    public init(id: Int, service: String, realm: String?, method: String, args: JSONObject) {
        self.id = id
        self.service = service
        self.realm = realm
        self.method = method
        self.args = args
    }
}

/// The value a remote call returned.
public struct RemoteResult: Sendable, Hashable {
    /// The id of the call answered.
    public var id: Int
    /// The returned value as read: a result decoded from a frame keeps it in the flat form the caller's
    /// proxy decodes straight into the method's result type.
    public var document: JSONDocument

    /// The returned value.
    public var value: JSONValue {
        get { document.value }
        set { document = JSONDocument(newValue) }
    }

    /// A result of a value.
    public init(id: Int, value: JSONValue) {
        self.init(id: id, document: JSONDocument(value))
    }

    /// A result of a value as read.
    public init(id: Int, document: JSONDocument) {
        self.id = id
        self.document = document
    }
}

/// An error reply: the failure of a call (`id` set) or of a message on the link (`id` nil, for example
/// an unknown message type).
public struct RemoteError: Sendable, Hashable {
    /// The id of the call that failed, or nil for a link-level error.
    public var id: Int?
    /// A stable code (`withdrawn`, `timeout`, `unknownType`…).
    public var code: String
    /// A sentence for people.
    public var message: String

    /// An error reply.
    public init(id: Int?, code: String, message: String) {
        self.id = id
        self.code = code
        self.message = message
    }
}
