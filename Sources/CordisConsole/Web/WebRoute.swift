import CordisControl
import CordisJSON
import CordisWire

/// What a web console request asks for, read from the request alone (no state): a page, an asset, the
/// live stream, the graph, or a change to send to the node. Anything else is refused with its status.
enum WebRoute: Sendable, Hashable {
    /// The console's one page (`/`, `/cluster`, `/plugins`, `/graph`, `/timeline`, `/services`).
    case page
    /// One of the page's own files.
    case asset(WebAssets.Asset)
    /// The server-sent events that keep every page live (`GET /events`).
    case events
    /// The cluster's fiber graph as SVG, laid out by Graphviz (`GET /graph.svg`).
    case graph
    /// A request for the node (`POST /api/action`).
    case action(WebAction)

    /// Why a request cannot be served: the status and a message for the page.
    struct Refusal: Error, Sendable, Hashable {
        /// The HTTP status (4xx).
        var status: Int
        /// What is wrong.
        var reason: String

        init(_ status: Int, _ reason: String) {
            self.status = status
            self.reason = reason
        }
    }

    /// The paths of the pages; each serves the same document, which shows the page its path names.
    static let pages: Set<String> = ["/", "/cluster", "/plugins", "/graph", "/timeline", "/services"]

    /// The route of `request`.
    static func of(_ request: HTTPRequest) -> Result<WebRoute, Refusal> {
        let path = request.path
        let reading = request.method == "GET" || request.method == "HEAD"
        if pages.contains(path) || path == "/events" || path == "/graph.svg" || WebAssets.Asset(path: path) != nil {
            guard reading else { return .failure(Refusal(405, "\(path) is read with GET")) }
            if path == "/events" { return .success(.events) }
            if path == "/graph.svg" { return .success(.graph) }
            if let asset = WebAssets.Asset(path: path) { return .success(.asset(asset)) }
            return .success(.page)
        }
        guard path == "/api/action" else { return .failure(Refusal(404, "nothing is served at \(path)")) }
        guard request.method == "POST" else { return .failure(Refusal(405, "/api/action takes POST")) }
        let type = request.header("content-type")?.lowercased() ?? ""
        guard type == "application/json" || type.hasPrefix("application/json;") else {
            return .failure(Refusal(415, "/api/action takes application/json"))
        }
        return WebAction.parse(request.body).map(WebRoute.action)
    }
}

/// One change or call the page asks the node for: the control command, the member it is for, and its
/// arguments, checked for shape here (the node checks the rest, and the operator's role).
struct WebAction: Sendable, Hashable {
    /// The control command.
    var command: ControlCommand
    /// The member it is for (nil: the node reached).
    var node: String?
    /// Its arguments.
    var args: JSONObject

    /// The commands the page may send, and whether each names an entry.
    static let commands: [ControlCommand: Bool] = [
        .enable: true, .disable: true, .config: true, .remove: true, .move: true, .restart: true,
        .add: false, .call: false, .forget: false,
    ]

    /// Reads `{"command": C, "node": N, "args": {…}}`.
    static func parse(_ body: [UInt8]) -> Result<WebAction, WebRoute.Refusal> {
        let value: JSONValue
        do {
            value = try JSONParser().parse(body)
        } catch {
            return .failure(WebRoute.Refusal(400, "the body is not JSON: \(error)"))
        }
        guard case .object(let object) = value else { return .failure(WebRoute.Refusal(400, "the body is not a JSON object")) }
        guard let command = object["command"]?.stringValue.flatMap(ControlCommand.init(rawValue:)),
              let namesEntry = commands[command]
        else {
            let known = commands.keys.map(\.rawValue).sorted().joined(separator: ", ")
            return .failure(WebRoute.Refusal(400, "command must be one of \(known)"))
        }
        var node: String?
        if let given = object["node"], given != .null {
            guard let name = given.stringValue, ConsoleArguments.isName(name) else {
                return .failure(WebRoute.Refusal(400, "node is not a node name (1-64 characters of A-Z a-z 0-9 . _ -)"))
            }
            node = name
        }
        let args: JSONObject
        switch object["args"] {
        case nil, .null?: args = JSONObject()
        case .object(let given)?: args = given
        default: return .failure(WebRoute.Refusal(400, "args is not a JSON object"))
        }
        if namesEntry {
            guard node != nil else { return .failure(WebRoute.Refusal(400, "\(command) needs the node of the entry")) }
            guard let entry = args["entry"]?.stringValue, ConsoleArguments.isName(entry) else {
                return .failure(WebRoute.Refusal(400, "\(command) needs args.entry, an entry id"))
            }
        }
        if command == .add, node == nil { return .failure(WebRoute.Refusal(400, "add needs the node to add to")) }
        if command == .forget, !(args["member"]?.stringValue.map(ConsoleArguments.isName) ?? false) {
            return .failure(WebRoute.Refusal(400, "forget needs args.member, a member's name"))
        }
        if command == .call, args["service"]?.stringValue == nil || args["method"]?.stringValue == nil {
            return .failure(WebRoute.Refusal(400, "call needs args.service and args.method"))
        }
        return .success(WebAction(command: command, node: node, args: args))
    }
}
