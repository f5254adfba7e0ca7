import CordisControl
import CordisJSON
import CordisWire
import Dispatch
import Foundation

/// `cordis-console web`: an HTTP server in the console process that serves the web console over the
/// console's own link to the node (the same session, requests and models as the terminal commands).
///
/// It follows the cluster's events, refetches the status and the members after each change (coalesced:
/// one fetch at a time, one more when changes came meanwhile), lays the fiber graph out with Graphviz,
/// and pushes all of it to every open page as server-sent events. Changes from a page go to the node as
/// the operator's requests, which the node authorises exactly as the terminal's. When the link goes, the
/// pages say so and the console reconnects, to the same address first, then to the members it saw.
actor WebConsole {
    /// The most pages following the cluster at once.
    static let maxStreams = 16
    /// The most bytes of a request body (a config or call arguments as JSON).
    static let maxBodyBytes = 256 * 1024
    /// The most events kept for a page that opens later.
    static let maxHistory = 1000
    /// The bounds of every HTTP connection: 64 at once, an 8 KiB head plus the body, 10 s to send a
    /// request and get the answer (a slow or silent client is cut then), and a 32 MiB backlog for a page
    /// that reads its live stream too slowly (a cluster of 8,000 fibers sends a state of 3.4 MB and a graph
    /// of about as much at once).
    static let limits = ByteServer.Limits(
        maxConnections: 64, maxRequestBytes: HTTPRequest.maxHeadBytes + maxBodyBytes, deadline: .seconds(10),
        maxStreamBacklog: 32 << 20)

    private let session: ConsoleSession
    private let access: WebAccess
    private let graph: WebGraph
    private var client: ControlClient
    private var address: String
    private var link = 0
    private var follower: Task<Void, Never>?

    private var streams: [Int: ByteServer.Stream] = [:]
    private var nextStream = 0

    private var status: JSONValue = .null
    /// When `status` was answered: an unreachable member's `lastSeen` in it counts from then.
    private var statusAnsweredAt = ContinuousClock.now
    private var members: JSONValue = .null
    private var catalog = JSONObject()
    private var catalogNodes: [String] = []
    /// Each node's remote-capable services with their interfaces' methods (the `interfaces` command).
    private var interfaces = JSONObject()
    private var problem: String?
    private var history = RecentWindow<JSONValue>(capacity: WebConsole.maxHistory)
    private var svg = ""
    private var graphError: String?
    private var dot = ""
    /// How long `dot` took for the graph shown.
    private var layoutSeconds = 0.0

    private var fetching = false
    private var stale = false
    private var graphing = false
    private var graphStale = false
    private var reconnecting = false

    init(session: ConsoleSession, access: WebAccess, graph: WebGraph) {
        self.session = session
        self.access = access
        self.graph = graph
        self.client = session.client
        self.address = session.address
    }

    // MARK: Serving

    /// What the server makes of the bytes of one connection received so far, before anything is
    /// asked of the node: wait for more, answer at once (a refusal, a page, an asset), or serve a route
    /// that needs the console. Pure: the parser, the access rules and the routes.
    enum Decision: Sendable, Hashable {
        /// Not a whole request yet.
        case needMore
        /// These bytes are the whole answer.
        case answer([UInt8])
        /// The console serves `route`; `extra` are headers for its answer (the cookie).
        case serve(WebRoute, extra: [String])
    }

    /// Decides on `bytes` (see `Decision`).
    static func decide(_ bytes: [UInt8], access: WebAccess) -> Decision {
        let request: HTTPRequest
        switch HTTPRequest.parse(bytes, maxBodyBytes: maxBodyBytes) {
        case .needMore:
            return .needMore
        case .refused(let status, let reason):
            return .answer(WebAnswer.text(status, reason))
        case .request(let parsed):
            request = parsed
        }
        let setCookie: Bool
        switch access.check(request) {
        case .refused(let status, let reason):
            return .answer(WebAnswer.text(status, reason))
        case .allowed(let cookie):
            setCookie = cookie
        }
        let extra = setCookie ? [access.cookieHeader] : []
        let headOnly = request.method == "HEAD"
        switch WebRoute.of(request) {
        case .failure(let refusal):
            return .answer(WebAnswer.json(refusal.status, ["error": .string(refusal.reason)]))
        case .success(.page):
            // The token came in the URL: keep it in the cookie and take it out of the address bar.
            if setCookie {
                return .answer(HTTPResponse.text(
                    status: 302, "", extraHeaders: WebAnswer.safety + extra + ["Location: \(request.path)"]))
            }
            return .answer(WebAnswer.asset(WebAssets.page, type: "text/html; charset=utf-8", extra: extra, headOnly: headOnly))
        case .success(.asset(let asset)):
            return .answer(WebAnswer.asset(asset.bytes, type: asset.contentType, extra: extra, headOnly: headOnly))
        case .success(let route):
            return .serve(route, extra: extra)
        }
    }

    /// What the server does with the bytes of one connection received so far (on the loop thread).
    nonisolated static func handle(_ bytes: [UInt8], reply: ByteServer.Reply, access: WebAccess, console: WebConsole) -> ByteServer.Verdict {
        switch decide(bytes, access: access) {
        case .needMore:
            return .needMore
        case .answer(let answer):
            reply.send(answer)
        case .serve(.events, _):
            Task { await console.follow(reply) }
        case .serve(.action(let action), _):
            Task { reply.send(await console.perform(action)) }
        case .serve(.graph, let extra):
            Task { await reply.send(WebAnswer.asset(Array(console.svg.utf8), type: "image/svg+xml", extra: extra)) }
        case .serve(.page, _), .serve(.asset, _):
            // `decide` answers these itself.
            reply.send(WebAnswer.text(500, "the console did not answer this request"))
        }
        return .answering
    }

    /// Opens a page's live stream: the current state, the graph and the recent events first.
    private func follow(_ reply: ByteServer.Reply) {
        guard streams.count < Self.maxStreams else {
            reply.send(WebAnswer.text(503, "more than \(Self.maxStreams) pages follow this console; close one"))
            return
        }
        let number = nextStream
        nextStream += 1
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
        let stream = reply.open(Array(head.utf8)) { [weak self] in
            Task { await self?.forget(stream: number) }
        }
        streams[number] = stream
        stream.write(Self.frame("state", stateJSON))
        stream.write(Self.frame("graph", graphJSON))
        stream.write(Self.frame("history", .array(history.elements)))
    }

    private func forget(stream number: Int) {
        streams[number] = nil
    }

    /// Sends `action` to the node on the current link: 200 with the node's answer, 422 with its refusal
    /// (a viewer's change, an invalid config), 503 when the node did not answer.
    private func perform(_ action: WebAction) async -> [UInt8] {
        do {
            let result = try await session.request(action.command, node: action.node, args: action.args, via: client)
            refresh()
            return WebAnswer.json(200, ["result": result])
        } catch let error as ConsoleError {
            return WebAnswer.json(error.code == .failed ? 422 : 503, ["error": .string(error.message)])
        } catch {
            return WebAnswer.json(503, ["error": .string("\(error)")])
        }
    }

    // MARK: Following the cluster

    /// Subscribes to the cluster's events on the current link and fetches everything once.
    func start() async throws {
        try await subscribe(history: true)
        follow(client, link: link)
        refresh()
    }

    /// Follows the cluster's events on `target` (the current link's client unless given), with the
    /// recent ones first when `wanted`.
    private func subscribe(history wanted: Bool, via target: ControlClient? = nil) async throws {
        let result = try await session.request(
            .subscribe, args: ["follow": true, "history": .bool(wanted), "cluster": true], via: target ?? client)
        if wanted {
            for event in result["events"]?.arrayValue ?? [] { remember(Self.eventJSON(event)) }
        }
    }

    private func follow(_ client: ControlClient, link: Int) {
        follower?.cancel()
        follower = Task { [weak self] in
            for await event in client.events {
                await self?.received(event, link: link)
            }
            await self?.lost(link: link, reason: await client.closeReason ?? "the link closed")
        }
    }

    private func received(_ event: ControlEvent, link: Int) {
        guard link == self.link else { return }
        let record = EventRecord(event)
        let json = Self.eventJSON(.object([
            "node": .string(record.node), "time": .double(record.time), "kind": .string(record.kind),
            "detail": .object(record.detail),
        ]))
        remember(json)
        guard record.kind == "lagged" else {
            broadcast("event", json)
            refresh()
            return
        }
        // The node ended the subscription because this console fell behind: follow again from now (the
        // pages are told once that holds), and fetch what the missed events changed.
        let current = client
        Task {
            do {
                try await subscribe(history: false, via: current)
            } catch {
                problem = "cannot follow the cluster again after falling behind: \(error)"
            }
            guard link == self.link else { return }
            broadcast("event", json)
            refresh()
        }
    }

    /// An event as the page shows it: the node's record with its text line (as `events` prints it).
    static func eventJSON(_ raw: JSONValue) -> JSONValue {
        guard var object = raw.objectValue else { return raw }
        if let record = try? JSONValueDecoder().decode(EventRecord.self, from: raw) {
            object["text"] = .string(EventText.describe(kind: record.kind, detail: .object(record.detail)))
        }
        return .object(object)
    }

    private func remember(_ event: JSONValue) {
        history.append(event)
    }

    /// Fetches the status and the members (one fetch at a time; one more when asked meanwhile).
    private func refresh() {
        guard !fetching else {
            stale = true
            return
        }
        fetching = true
        stale = false
        let (current, number) = (client, link)
        Task {
            let outcome: Result<(JSONValue, JSONValue), ConsoleError>
            do {
                async let status = session.clusterStatusResult(via: current)
                async let members = session.request(.members, via: current)
                outcome = .success(try await (status, members))
            } catch let error as ConsoleError {
                outcome = .failure(error)
            } catch {
                outcome = .failure(ConsoleError(.failed, "\(error)"))
            }
            await fetched(outcome, link: number)
        }
    }

    private func fetched(_ outcome: Result<(JSONValue, JSONValue), ConsoleError>, link number: Int) async {
        fetching = false
        guard number == link else { return }
        switch outcome {
        case .success(let (status, members)):
            self.status = status
            statusAnsweredAt = .now
            self.members = members
            problem = nil
            let reachable = (members["members"]?.arrayValue ?? []).filter { $0["reachable"]?.boolValue == true }
                .compactMap { $0["name"]?.stringValue }.sorted()
            if reachable != catalogNodes {
                catalogNodes = reachable
                await fetchCatalog()
            }
            layOutGraph()
        case .failure(let error):
            problem = error.message
        }
        broadcast("state", stateJSON)
        if stale { refresh() }
    }

    private func fetchCatalog() async {
        let quiet = ConsoleOutput(isTerminal: false, out: { _ in }, err: { _ in })
        if let (all, _) = try? await session.askEach(.catalog, on: nil, output: quiet, via: client) {
            catalog = all
        }
        // A node older than the `interfaces` command answers none: its methods are typed by name.
        if let (all, _) = try? await session.askEach(.interfaces, on: nil, output: quiet, via: client) {
            interfaces = all
        }
    }

    /// Lays the graph out again when its DOT text changed (one `dot` at a time; the latest text next).
    private func layOutGraph() {
        guard let parsed = try? ClusterStatus(json: status) else { return }
        let text = GraphDot.render(parsed)
        guard text != dot else { return }
        dot = text
        if graphing {
            graphStale = true
        } else {
            runDot(text)
        }
    }

    private func runDot(_ text: String) {
        graphing = true
        graphStale = false
        let graph = self.graph
        Task {
            let start = ContinuousClock.now
            let outcome = await graph.svg(text)
            laidOut(outcome, seconds: ControlTimeout.seconds(.now - start))
        }
    }

    private func laidOut(_ outcome: Result<String, WebGraph.Failure>, seconds: Double) {
        graphing = false
        layoutSeconds = seconds
        switch outcome {
        case .success(let text):
            svg = text
            graphError = nil
        case .failure(let failure):
            graphError = failure.message
        }
        broadcast("graph", graphJSON)
        if graphStale { runDot(dot) }
    }

    private func lost(link number: Int, reason: String) async {
        guard number == link, !reconnecting else { return }
        reconnecting = true
        problem = "lost the link to \(address): \(reason); reconnecting"
        broadcast("state", stateJSON)
        let seen = (members["members"]?.arrayValue ?? []).flatMap { member in
            (member["addresses"]?.arrayValue ?? []).compactMap(\.stringValue)
        }
        var reconnection = Reconnection(lost: address, seen: seen)
        while !Task.isCancelled {
            let target = reconnection.target
            do {
                let parsed = try Address(parsing: target)
                let fresh = try await session.connector(parsed)
                let old = client
                Task { await old.close() }
                client = fresh
                address = target
                link += 1
                reconnecting = false
                try await subscribe(history: false)
                follow(fresh, link: link)
                problem = nil
                refresh()
                return
            } catch {
                problem = ConsoleSession.connectFailure(error, node: target, timeout: Double(session.timeout.components.seconds)).message
                    + "; reconnecting"
                broadcast("state", stateJSON)
            }
            reconnection.failed()
            // The wait between attempts is a backoff, not a synchronisation.
            try? await Task.sleep(for: reconnection.delay)
        }
    }

    // MARK: What the pages get

    private var stateJSON: JSONValue {
        .object([
            "node": .string(address), "status": statusNow, "members": members, "catalog": .object(catalog), "interfaces": .object(interfaces),
            "problem": problem.map(JSONValue.string) ?? .null,
        ])
    }

    /// `status` as of now: each unreachable member's `lastSeen` counted on from when the node answered,
    /// so a page that opens later (or hears the state again later) is told how long ago it is now.
    private var statusNow: JSONValue {
        let seconds = ControlTimeout.seconds(.now - statusAnsweredAt)
        guard seconds > 0, var object = status.objectValue, let nodes = object["nodes"]?.arrayValue else { return status }
        object["nodes"] = .array(nodes.map { node in
            guard var member = node.objectValue, member["reachable"]?.boolValue == false,
                  let seen = member["lastSeen"]?.doubleValue
            else { return node }
            member["lastSeen"] = .double(seen + seconds)
            return .object(member)
        })
        return .object(object)
    }

    private var graphJSON: JSONValue {
        .object([
            "svg": .string(svg), "error": graphError.map(JSONValue.string) ?? .null, "layoutSeconds": .double(layoutSeconds),
        ])
    }

    private func broadcast(_ name: String, _ value: JSONValue) {
        let frame = Self.frame(name, value)
        for stream in streams.values { stream.write(frame) }
    }

    /// One server-sent event: its name and its data as one line of compact JSON.
    static func frame(_ name: String, _ value: JSONValue) -> [UInt8] {
        Array("event: \(name)\ndata: \(value.jsonString(.compact))\n\n".utf8)
    }

    /// Stops following and closes every page's stream.
    func stop() async {
        follower?.cancel()
        for stream in streams.values { stream.close() }
        streams = [:]
        await client.close()
    }
}

/// The web console's answers: text, JSON and the page's own files, never cached by the browser.
enum WebAnswer {
    /// Headers every answer carries: no caching, no sniffing, no framing by another site, and only the
    /// page's own scripts and styles.
    static let safety = [
        "Cache-Control: no-store", "X-Content-Type-Options: nosniff", "X-Frame-Options: DENY",
        "Referrer-Policy: no-referrer",
        "Content-Security-Policy: default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
    ]

    static func text(_ status: Int, _ body: String) -> [UInt8] {
        HTTPResponse.text(status: status, body + "\n", extraHeaders: safety)
    }

    static func json(_ status: Int, _ body: JSONObject) -> [UInt8] {
        HTTPResponse.text(status: status, JSONValue.object(body).jsonString(.compact), contentType: "application/json", extraHeaders: safety)
    }

    static func asset(_ bytes: [UInt8], type: String, extra: [String], headOnly: Bool = false) -> [UInt8] {
        HTTPResponse.bytes(status: 200, body: bytes, contentType: type, extraHeaders: safety + extra, headOnly: headOnly)
    }
}
