import CordisJSON

/// A console's request to a node's control API: a command with JSON arguments, answered by a
/// `ControlResponse` with the same id. `node`, when set, names the member that must run it (the node
/// reached relays it).
public struct ControlRequest: Sendable, Hashable {
    /// Matches the response.
    public var id: Int
    /// The command: `status`, `catalog`, `enable`, `disable`, `config`, `add`, `remove`, `call`, …
    public var command: String
    /// The member that must run it; nil for the node reached.
    public var node: String?
    /// The command's arguments.
    public var args: JSONObject
    /// How long the sender waits for the answer, in seconds; a node bounds what it relays to other
    /// members by it. Nil: the node's default (10 s).
    public var timeout: Double?
    /// Who asked, when a node relays the request for a console (`operator` on the wire); nil from a
    /// console itself, whose link says who it is.
    public var `operator`: RequestOperator?

    /// Creates a request.
    public init(
        id: Int, command: String, node: String? = nil, args: JSONObject = JSONObject(), timeout: Double? = nil,
        operator: RequestOperator? = nil
    ) {
        self.id = id
        self.command = command
        self.node = node
        self.args = args
        self.timeout = timeout
        self.operator = `operator`
    }
}

/// A node's answer to a `ControlRequest`: a result, or an error with a code and a message.
public struct ControlResponse: Sendable, Hashable {
    /// The request's id.
    public var id: Int
    /// The result when the command succeeded.
    public var result: JSONValue?
    /// The error code when it failed (`rejected`, `unknown-command`, `unreachable`, …).
    public var errorCode: String?
    /// The error message when it failed.
    public var errorMessage: String?
    /// For a result sent in pages: whether more pages follow (all share the id).
    public var more: Bool

    /// A successful response.
    public init(id: Int, result: JSONValue, more: Bool = false) {
        self.id = id
        self.result = result
        self.more = more
    }

    /// A failed response.
    public init(id: Int, errorCode: String, errorMessage: String) {
        self.id = id
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.more = false
    }
}
