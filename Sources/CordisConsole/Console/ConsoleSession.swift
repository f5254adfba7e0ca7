import CordisJSON
import CordisControl
import CordisWire
import Foundation
import Synchronization

/// One console run: the link to the node reached, the request timeout, and the commands.
final class ConsoleSession: Sendable {
    let client: ControlClient
    let address: String
    let timeout: Duration
    let json: Bool
    /// Opens another link with the same identity, secret and TLS files (`watch` reconnecting), within
    /// the timeout.
    let connector: @Sendable (Address) async throws -> ControlClient

    private init(
        client: ControlClient, address: String, timeout: Duration, json: Bool,
        connector: @escaping @Sendable (Address) async throws -> ControlClient
    ) {
        self.client = client
        self.address = address
        self.timeout = timeout
        self.json = json
        self.connector = connector
    }

    /// Connects to the node named by `arguments`.
    ///
    /// - Throws: `ConsoleError` `.usage` without a node address or with a bad one, `.unavailable` when
    ///   the node cannot be reached in time, `.failed` for an unusable secret file.
    static func open(_ arguments: ConsoleArguments) async throws -> ConsoleSession {
        guard let node = arguments.node else {
            throw ConsoleError(.usage, "no node to reach: give --node ADDR or set CORDIS_CONSOLE_NODE")
        }
        let address: Address
        do {
            address = try Address(parsing: node)
        } catch {
            throw ConsoleError(.usage, "--node: \(error)")
        }
        var secrets: ClusterSecrets?
        if let file = arguments.secretFile {
            do {
                secrets = try ClusterSecrets.load(files: [file])
            } catch {
                throw ConsoleError(.failed, "--secret-file: \(error.message)")
            }
        }
        var tls: TLSContext?
        var operatorName: String?
        if let certificate = arguments.tlsCertificate, let key = arguments.tlsKey, let ca = arguments.tlsCA {
            do throws(TLSError) {
                let context = try TLSFiles.load(TLSConfiguration(certificateFile: certificate, keyFile: key, caFile: ca))
                guard let own = context.ownNames.first(where: { $0.kind == .operator }) else {
                    throw TLSError(
                        .configuration,
                        "--tls-cert \(certificate) names no operator (a SAN URI:cordis://operator/NAME is needed)")
                }
                tls = context
                operatorName = own.name
            } catch {
                throw ConsoleError(.failed, "\(error.message)")
            }
        }
        let timeout: Duration
        do {
            timeout = try ControlTimeout.parse(arguments.timeout)
        } catch {
            throw ConsoleError(.usage, "--timeout \(error.message)")
        }
        // Under TLS the console's name is its certificate's operator name, which the node checks.
        let name = operatorName ?? "console-\(ProcessInfo.processInfo.processIdentifier)"
        let client: ControlClient
        let chosen = secrets
        let context = tls
        let connector: @Sendable (Address) async throws -> ControlClient = { target in
            try await withDeadline(timeout) {
                try await ControlClient.connect(to: target, name: name, secrets: chosen, tls: context, timeout: timeout)
            }
        }
        do {
            client = try await connector(address)
        } catch {
            throw connectFailure(
                error, node: node, timeout: arguments.timeout, certificate: arguments.tlsCertificate, ca: arguments.tlsCA)
        }
        return ConsoleSession(client: client, address: node, timeout: timeout, json: arguments.json, connector: connector)
    }

    /// What the console reports when the link to `node` could not be set up: a `timeout` when the
    /// node did not answer in time (the deadline, or the dial or handshake timing out), a TLS refusal
    /// in words an operator can act on, else why not. `certificate` and `ca` are the TLS files in use.
    static func connectFailure(
        _ error: any Error, node: String, timeout: Double, certificate: String? = nil, ca: String? = nil
    ) -> ConsoleError {
        let timedOut: Bool
        switch error {
        case is DeadlineExceeded: timedOut = true
        case let error as TransportError: timedOut = error.code == .handshakeTimeout || error.code == .connectTimeout
        default: timedOut = false
        }
        if timedOut { return ConsoleError(.unavailable, "timeout: \(node) did not answer within \(timeout) s") }
        if let error = error as? TransportError, error.code == .tls,
           let refusal = tlsRefusal(error.message, node: node, certificate: certificate, ca: ca) {
            return ConsoleError(.unavailable, refusal)
        }
        if let error = error as? WireError, error.code == .rejected || error.code == .notAdmitted {
            // The node's own reason, without the handshake's wrapping (`peer refused the handshake (CODE): `).
            var reason = error.message
            if reason.hasPrefix("peer refused the handshake ("), let colon = reason.range(of: "): ") {
                reason = String(reason[colon.upperBound...])
            }
            var message = "\(node) refused this console: \(reason)"
            if reason.contains("; seen as ") {
                message += ". An admin admits it by giving one of these identities a role in the node's "
                    + "operators file (--operators), then sending the node SIGHUP"
            } else if reason.contains("; it has no identity") {
                message += " (a TCP console without the cluster secret or an operator certificate): "
                    + "connect with --secret-file or --tls-cert"
            }
            return ConsoleError(.unavailable, message)
        }
        return ConsoleError(.unavailable, "cannot reach node \(node): \(error)")
    }

    /// libssl's reason for a failed TLS handshake (`tlsv1 alert unknown ca`, a verification failure)
    /// as what happened and what to do, or nil when it is none of those.
    static func tlsRefusal(_ reason: String, node: String, certificate: String?, ca: String?) -> String? {
        let text = reason.lowercased()
        let ours = certificate.map { "this console's certificate \($0)" } ?? "this console's certificate"
        if text.contains("alert unknown ca") {
            return "\(node) does not trust \(ours): it is not signed by a CA in that node's --tls-ca file. "
                + "Use an operator certificate issued by the cluster's CA (SAN URI:cordis://operator/NAME), "
                + "or have an admin add its CA to the nodes' --tls-ca files"
        }
        if text.contains("alert certificate expired") {
            return "\(node) refused \(ours): it has expired or is not valid yet; get a new one from the cluster's CA"
        }
        if text.contains("alert bad certificate") || text.contains("alert certificate unknown")
            || text.contains("alert unsupported certificate") || text.contains("alert certificate revoked") {
            return "\(node) refused \(ours) (\(reason)); use an operator certificate issued by the cluster's CA"
        }
        if text.contains("did not verify") {
            let file = ca.map { " against --tls-ca \($0)" } ?? ""
            return "the certificate of \(node) did not verify\(file) (\(reason)); "
                + "check that --tls-ca holds the CA that signed the cluster's node certificates"
        }
        return nil
    }

    func close() async {
        await client.close()
    }

    /// Sends one request (on `client`, the session's own link by default); maps the node's refusals to
    /// exit 1 and silence to exit 69.
    func request(
        _ command: ControlCommand, node: String? = nil, args: JSONObject = JSONObject(), via client: ControlClient? = nil
    ) async throws -> JSONValue {
        do {
            return try await (client ?? self.client).request(command, node: node, args: args, timeout: timeout)
        } catch let failure as ControlFailure {
            throw ConsoleError(.failed, failure.message)
        } catch let error as ControlClientError where error.code == .timeout {
            throw ConsoleError(.unavailable, "timeout: \(address) did not answer within \(timeout)")
        } catch {
            throw ConsoleError(.unavailable, "the link to \(address) failed: \(error)")
        }
    }

    /// The whole cluster's status result, seen through the node reached (on `client`), pages joined; with
    /// `on`, only that member's (the node reached says so when it knows no such member).
    func clusterStatusResult(on member: String? = nil, via client: ControlClient? = nil) async throws -> JSONValue {
        var args: JSONObject = ["cluster": true]
        if let member { args["on"] = .string(member) }
        let joined = StatusPaging.join(try await request(.status, args: args, via: client))
        guard let member else { return joined }
        // A node older than `on` answers for the whole cluster: keep the member asked for.
        let nodes = (joined["nodes"]?.arrayValue ?? []).filter { $0["name"]?.stringValue == member }
        guard !nodes.isEmpty else { throw ConsoleError(.failed, "\(address) knows no member named \(member)") }
        return .object(["nodes": .array(nodes)])
    }

    /// The whole cluster's status, seen through the node reached (on `client`).
    func clusterStatus(via client: ControlClient? = nil) async throws -> ClusterStatus {
        let raw = try await clusterStatusResult(via: client)
        return try decoded("status") { try ClusterStatus(json: raw) }
    }

    /// The model `decode` reads from a node's answer; a `ConfigError` becomes a `failed` console error
    /// that names the node reached and every problem with its path.
    func decoded<T>(_ what: String, _ decode: () throws -> T) throws -> T {
        do {
            return try decode()
        } catch let error as ConfigError {
            let problems = error.issues.map(\.description).joined(separator: "; ")
            throw ConsoleError(.failed, "\(address) sent a malformed \(what): \(problems)")
        }
    }

    /// Decodes a `T` from a node's answer (see `decoded(_:_:)`).
    func decode<T: Decodable>(_ type: T.Type, from value: JSONValue, as what: String) throws -> T {
        try decoded(what) { try JSONValueDecoder().decode(type, from: value) }
    }

    /// Runs `command`; returns the exit code.
    func run(_ command: ConsoleCommand, output: ConsoleOutput) async throws -> Int32 {
        let style = TextStyle(colored: output.isTerminal)
        switch command {
        case .help:
            output.out(ConsoleArguments.usage + "\n")
            return 0
        case .version:
            output.out(ConsoleArguments.versionLine + "\n")
            return 0
        case .status(let on):
            // The JSON is printed as the node sent it, before it is read for the exit code.
            let raw = try await clusterStatusResult(on: on)
            if json { output.out(raw.jsonString(.pretty)) }
            let status = try decoded("status") { try ClusterStatus(json: raw) }
            if !json { output.out(StatusText.render(status, style: style)) }
            return status.hasProblems ? 3 : 0
        case .graph(let format):
            let status = try await clusterStatus()
            output.out(format == .dot ? GraphDot.render(status) : GraphText.render(status, style: style))
            return 0
        case .members:
            let result = try await request(.members)
            if json {
                output.out(result.jsonString(.pretty))
            } else {
                for member in try decode([MemberStatus].self, from: result["members"] ?? .array([]), as: "member list") {
                    // An older node sends only `reachable`, which then means linked.
                    let health = member.health ?? (member.reachable ? "reachable" : "unreachable")
                    var line = "\(member.name) " + style.paint(health, member.reachable ? (health == "degraded" ? "33" : "32") : "31")
                    if member.linked == false, member.reachable { line += style.dim(" (no link)") }
                    output.out(line + " \(member.addresses.joined(separator: " "))\n")
                }
            }
            return 0
        case .catalog(let on):
            return try await catalog(on: on, output: output, style: style)
        case .events(let follow, let on):
            return try await events(follow: follow, on: on, output: output)
        case .watch:
            return try await watch(output: output)
        case .setDisabled(let reference, let disabled):
            let result = try await request(disabled ? .disable : .enable, node: reference.node, args: ["entry": .string(reference.entry)])
            return printEntry(result, node: reference.node, output: output, style: style)
        case .config(let reference, let config):
            let result = try await request(.config, node: reference.node, args: ["entry": .string(reference.entry), "config": config])
            return printEntry(result, node: reference.node, output: output, style: style)
        case .showConfig(let reference):
            let config = try await storedConfig(of: reference)
            output.out(config.jsonString(json ? .pretty : .compact) + (json ? "" : "\n"))
            return 0
        case .add(let node, let parent, let entry):
            var args: JSONObject = ["entry": .object(entry)]
            if let parent { args["parent"] = .string(parent) }
            let result = try await request(.add, node: node, args: args)
            return printEntry(result, node: node, output: output, style: style)
        case .move(let reference, let parent):
            var args: JSONObject = ["entry": .string(reference.entry)]
            if let parent { args["parent"] = .string(parent) }
            let result = try await request(.move, node: reference.node, args: args)
            return printEntry(result, node: reference.node, output: output, style: style)
        case .restart(let reference):
            let result = try await request(.restart, node: reference.node, args: ["entry": .string(reference.entry)])
            return printEntry(result, node: reference.node, output: output, style: style)
        case .traffic(let on):
            return try await traffic(on: on, output: output, style: style)
        case .remove(let reference):
            let result = try await request(.remove, node: reference.node, args: ["entry": .string(reference.entry)])
            if json {
                output.out(result.jsonString(.pretty))
            } else {
                output.out("\(reference) removed\n")
            }
            return 0
        case .call(let service, let method, let args, let realm):
            var request: JSONObject = ["service": .string(service), "method": .string(method), "args": .object(args)]
            if let realm { request["realm"] = .string(realm) }
            let result = try await self.request(.call, args: request)
            output.out(result.jsonString(json ? .pretty : .compact) + (json ? "" : "\n"))
            return 0
        case .sign:
            throw ConsoleError(.usage, "sign reaches no node")
        case .web(let listen, let certificate, let key):
            return try await web(listen: listen, certificate: certificate, key: key, output: output)
        case .apply(let path):
            return try await apply(path, output: output)
        case .forget(let member):
            let result = try await request(.forget, args: ["member": .string(member)])
            output.out(json ? result.jsonString(.pretty) : "\(member) forgotten\n")
            return 0
        }
    }

    /// Prints a changed entry's resulting state: `NODE:ENTRY STATE` (and its error, if any). Returns the
    /// exit code: 1 when the change was applied but left the entry's fiber `failed` (its plugin does not
    /// run; `config`, `enable`, `add`, `move` and `restart` alike), else 0.
    private func printEntry(_ result: JSONValue, node: String, output: ConsoleOutput, style: TextStyle) -> Int32 {
        var object = result.objectValue ?? JSONObject()
        object["node"] = .string(node)
        let code: Int32 = result["state"]?.stringValue == "failed" ? 1 : 0
        if json {
            output.out(JSONValue.object(object).jsonString(.pretty))
            return code
        }
        let entry = result["entry"]?.stringValue ?? "?"
        let state = result["state"]?.stringValue
        var line = "\(node):\(entry) " + (state.map(style.state) ?? style.dim(result["disabled"]?.boolValue == true ? "disabled" : "no fiber"))
        if let error = result["error"]?.stringValue { line += " " + style.paint("error: \(error)", "31") }
        output.out(line + "\n")
        return code
    }

    /// Entry `reference`'s config as its node stores it, read from that node's status.
    ///
    /// - Throws: `ConsoleError` `failed` when the node has no such entry or is too old to report configs,
    ///   or the request's own errors.
    private func storedConfig(of reference: EntryReference) async throws -> JSONValue {
        let raw = StatusPaging.join(try await request(.status, node: reference.node))
        let status = try decoded("status") { try ClusterStatus(json: raw) }
        guard let node = status.nodes.first(where: { $0.name == reference.node }), node.reachable else {
            throw ConsoleError(.failed, "\(reference.node) sent no status")
        }
        guard let entry = node.entries.first(where: { $0.id == reference.entry }) else {
            throw ConsoleError(.failed, "unknown entry \"\(reference.entry)\" on \(reference.node)")
        }
        guard let config = entry.config else {
            throw ConsoleError(.failed, "\(reference.node) does not report configs: it runs an older cordis-node")
        }
        return config
    }

    /// Asks `command` of `on`, or of every member the node reached has a link to (on `client`, the
    /// session's own link by default); a member's refusal is printed on stderr and makes the exit code
    /// 1, the others' answers are kept.
    func askEach(
        _ command: ControlCommand, on: String?, output: ConsoleOutput, via client: ControlClient? = nil
    ) async throws -> (JSONObject, Int32) {
        var nodes: [String]
        if let on {
            nodes = [on]
        } else {
            let members = try await request(.members, via: client)
            nodes = try decode([MemberStatus].self, from: members["members"] ?? .array([]), as: "member list")
                .filter(\.reachable).map(\.name)
        }
        var all = JSONObject()
        var code: Int32 = 0
        for node in nodes {
            do {
                all[node] = try await request(command, node: node, via: client)
            } catch let error as ConsoleError where error.code == .failed {
                output.err("error: \(node): \(error.message)\n")
                code = 1
            }
        }
        return (all, code)
    }

    private func traffic(on: String?, output: ConsoleOutput, style: TextStyle) async throws -> Int32 {
        let (all, code) = try await askEach(.traffic, on: on, output: output)
        if json {
            output.out(JSONValue.object(["nodes": .object(all)]).jsonString(.pretty))
            return code
        }
        for (node, report) in all {
            let seconds = report["seconds"]?.doubleValue.map { " in \(Int($0.rounded(.down))) s" } ?? ""
            output.out("node \(style.bold(node))\(seconds)\n")
            let sent = report["sent"]?.objectValue ?? JSONObject()
            let received = report["received"]?.objectValue ?? JSONObject()
            var kinds = sent.keys
            for kind in received.keys where !kinds.contains(kind) { kinds.append(kind) }
            let width = max(4, kinds.map(\.count).max() ?? 0)
            func cell(_ text: String, _ count: Int, right: Bool = true) -> String {
                let pad = String(repeating: " ", count: max(0, count - text.count))
                return right ? pad + text : text + pad
            }
            output.out("  " + cell("kind", width, right: false) + "  " + cell("sent", 10) + "  " + cell("received", 10) + "\n")
            for kind in kinds {
                let out = sent[kind]?.int64Value.map(String.init) ?? "0"
                let into = received[kind]?.int64Value.map(String.init) ?? "0"
                output.out("  " + cell(kind, width, right: false) + "  " + cell(out, 10) + "  " + cell(into, 10) + "\n")
            }
        }
        return code
    }

    private func catalog(on: String?, output: ConsoleOutput, style: TextStyle) async throws -> Int32 {
        let (all, code) = try await askEach(.catalog, on: on, output: output)
        if json {
            output.out(JSONValue.object(["nodes": .object(all)]).jsonString(.pretty))
            return code
        }
        for (node, plugins) in all {
            output.out("node \(style.bold(node))\n")
            for plugin in try decode([CatalogPlugin].self, from: plugins, as: "catalog of \(node)") {
                var line = "  \(style.bold(plugin.name))"
                if !plugin.provides.isEmpty { line += " provides " + plugin.provides.joined(separator: ", ") }
                if !plugin.injects.isEmpty { line += " injects " + plugin.injects.joined(separator: ", ") }
                output.out(line + "\n")
                for field in plugin.config {
                    output.out("    config \(field.path): \(field.type)\(field.optional ? " (optional)" : "")\n")
                }
            }
        }
        return code
    }

    /// `events [--follow] [--on NODE]`: the recent events, then with `follow` each new one until the
    /// console is stopped. When the link to the node goes, it says so on stderr and reconnects as
    /// `watch` does (`Reconnection`: the same address, then every address a member was seen with), then
    /// prints from the nodes' history what happened meanwhile and nothing printed already (`EventResume`).
    private func events(follow: Bool, on: String?, output: ConsoleOutput) async throws -> Int32 {
        var args: JSONObject = ["follow": .bool(follow), "history": true, "cluster": true]
        if let on { args["on"] = .string(on) }
        var resume = EventResume()
        var client = self.client
        var address = self.address
        func printHistory(_ result: JSONValue) throws {
            let history = result["events"] ?? .array([])
            let records = try decode([EventRecord].self, from: history, as: "event history")
            for (record, raw) in zip(records, history.arrayValue ?? []) where !resume.unseen([record]).isEmpty {
                // A recorded event is printed with --json as the node sent it.
                output.out(json ? raw.jsonString(.compact) + "\n" : EventText.line(record))
            }
        }
        try printHistory(try await request(.subscribe, args: args))
        guard follow else { return 0 }
        var seen = await memberAddresses(via: client)
        while true {
            for await event in client.events {
                let record = EventRecord(event)
                resume.saw(record)
                output.out(try EventText.line(record, json: json))
                // Nobody reads any more (`events --follow | head -1` after head exited): the follow is over.
                if output.isReaderGone() { return 0 }
                // The node ended the subscription because this console fell behind: follow again from now.
                if event.kind == "lagged" {
                    args["history"] = false
                    _ = try await request(.subscribe, args: args, via: client)
                }
            }
            output.err("lost the link to \(address): \(await client.closeReason ?? "the link closed"); reconnecting\n")
            var reconnection = Reconnection(lost: address, seen: seen)
            while true {
                // The wait between attempts is a backoff, not a synchronisation.
                try await Task.sleep(for: reconnection.delay)
                if output.isReaderGone() { return 0 }
                let target = reconnection.target
                do {
                    let fresh = try await connector(try Address(parsing: target))
                    args["history"] = true
                    let result: JSONValue
                    do {
                        result = try await request(.subscribe, args: args, via: fresh)
                    } catch {
                        await fresh.close()
                        throw error
                    }
                    let old = client
                    Task { await old.close() }
                    client = fresh
                    address = target
                    output.err("connected to \(target)\n")
                    try printHistory(result)
                    seen = await memberAddresses(via: client)
                    break
                } catch {
                    let reason = (error as? ConsoleError)?.message
                        ?? Self.connectFailure(error, node: target, timeout: Double(timeout.components.seconds)).message
                    output.err("cannot reconnect to \(target): \(reason)\n")
                    reconnection.failed()
                }
            }
        }
    }

    /// The addresses the members the node reached on `client` advertise (none when it does not say).
    private func memberAddresses(via client: ControlClient) async -> [String] {
        guard let result = try? await request(.members, via: client),
              let members = try? decode([MemberStatus].self, from: result["members"] ?? .array([]), as: "member list")
        else { return [] }
        return members.flatMap(\.addresses)
    }
}

/// Thrown by `withDeadline` when the work does not finish in time.
struct DeadlineExceeded: Error {}

/// Runs `work`, throwing `DeadlineExceeded` if it has not finished after `deadline` (measured by a
/// Dispatch timer; `work` is cancelled then).
func withDeadline<T: Sendable>(_ deadline: Duration, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
    let race = DeadlineRace<T>()
    let (seconds, attoseconds) = deadline.components
    let nanoseconds = seconds >= Int64.max / 1_000_000_000 ? Int64.max : seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.outcome.withLock { $0 = continuation }
            let task = Task {
                let result: Result<T, any Error>
                do {
                    result = .success(try await work())
                } catch {
                    result = .failure(error)
                }
                race.finish(with: result)
            }
            race.task.withLock { $0 = task }
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: nanoseconds))) {
                race.finish(with: .failure(DeadlineExceeded()))
            }
        }
    } onCancel: {
        race.task.withLock { $0 }?.cancel()
    }
}

/// The state `withDeadline`'s work and timer race for: whichever finishes first resumes the waiter and
/// cancels the work (both guarded by their `Mutex`).
private final class DeadlineRace<T: Sendable>: Sendable {
    let outcome = Mutex<CheckedContinuation<T, any Error>?>(nil)
    let task = Mutex<Task<Void, Never>?>(nil)

    func finish(with result: Result<T, any Error>) {
        guard let waiting = outcome.withLock({ $0.take() }) else { return }
        task.withLock { $0 }?.cancel()
        waiting.resume(with: result)
    }
}
