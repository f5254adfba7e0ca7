import Cordis
import CordisWire

/// The control API served to authenticated consoles: status and Loader commands.
extension ControlServer {
    /// Runs a console's request and answers it. Every accepted change is logged with who made it.
    func serve(_ request: ControlRequest, from session: PeerSession) {
        if case .refuse(let reason) = node.state.startRequest(session: session.id) {
            node.send(.response(ControlResponse(
                id: request.id, errorCode: "busy", errorMessage: "\(node.name) runs no more requests of \(session.identity.name): \(reason)")),
                 to: session)
            return
        }
        node.activity.start { [weak node] in
            guard let node else { return }
            defer { node.state.finishRequest(session: session.id) }
            let response: ControlResponse
            do {
                response = ControlResponse(id: request.id, result: try await node.control.run(request, by: session))
            } catch let error as LoaderError {
                response = ControlResponse(id: request.id, errorCode: "rejected", errorMessage: error.message)
            } catch let error as ControlError {
                response = ControlResponse(id: request.id, errorCode: error.code, errorMessage: error.message)
            } catch let error as RemoteCallError {
                response = ControlResponse(id: request.id, errorCode: error.code.rawValue, errorMessage: error.message)
            } catch {
                response = ControlResponse(id: request.id, errorCode: "failed", errorMessage: "\(error)")
            }
            node.control.sendPaged(response, to: session)
        }
    }

    private func run(_ request: ControlRequest, by session: PeerSession) async throws -> JSONValue {
        // Checked here by this node's operators file, and again by the member a request is relayed to.
        guard let command = ControlCommand(rawValue: request.command) else {
            throw ControlError("unknown-command", "unknown command \"\(request.command)\"")
        }
        let requester = await namedRequester(of: request, from: session)
        try authorize(request, command, by: requester, from: session)
        // A request starts only while its link is open: once it closed nobody is left to answer, so a
        // read is not worked out (a console closed for not reading may leave hundreds queued, which
        // everyone else waited behind) and a change is not made. A change refused so is audited.
        if session.link.connection.isClosed {
            let reason = "the link of \(session.identity.name) closed before the request started"
            if command.isChange, request.node == nil || request.node == node.name {
                audit(session, requester, describe(request, command), entry: Self.entry(of: request), refused: reason)
            }
            throw ControlError("closed", reason)
        }
        if let target = request.node, target != node.name {
            var relayed = request
            relayed.operator = requester?.relayed
            let result = try await ask(target, relayed, timeout: relayTimeout(for: request))
            return command == .status ? StatusPaging.join(result) : result
        }
        return try await auditingRefusal(of: request, command, by: requester, from: session) {
            try await self.execute(request, command, by: requester, from: session)
        }
    }

    /// Runs `body`; when it throws for a change audited on refusal (the Loader refused it, say), the
    /// refusal is audited with the operator before the error goes back. An applied change is audited
    /// by its handler.
    private func auditingRefusal(
        of request: ControlRequest, _ command: ControlCommand, by requester: OperatorIdentity?,
        from session: PeerSession, _ body: () async throws -> JSONValue
    ) async throws -> JSONValue {
        do {
            return try await body()
        } catch {
            if command.isAuditedOnRefusal {
                let reason: String
                switch error {
                case let error as LoaderError: reason = error.message
                case let error as ControlError: reason = error.message
                default: reason = "\(error)"
                }
                audit(session, requester, describe(request, command), entry: Self.entry(of: request), refused: reason)
            }
            throw error
        }
    }

    /// Runs a request authorised here, on this node.
    private func execute(
        _ request: ControlRequest, _ command: ControlCommand, by requester: OperatorIdentity?, from session: PeerSession
    ) async throws -> JSONValue {
        let args = request.args
        switch command {
        case .status:
            return try await status(request, by: requester)
        case .members:
            return try membersList()
        case .traffic:
            return trafficReport()
        case .forget:
            let result = try forget(request, by: requester)
            audit(session, requester, describe(request, command), entry: nil)
            return result
        case .subscribe:
            return try await subscribe(request, by: session, for: requester)
        case .unsubscribe:
            return unsubscribe(request, by: session)
        case .catalog:
            return try JSONValueEncoder().encode(node.loader.plugins.map { item in
                CatalogPlugin(
                    name: item.name, injects: item.injects.map(\.description), provides: item.provides,
                    config: item.schema.fields.map {
                        CatalogPlugin.Field(path: $0.path, type: $0.type, optional: $0.isOptional)
                    })
            })
        case .interfaces:
            return .array(node.remoteServices.all.map { service in
                .object([
                    "service": .string(service.name), "interface": .string(service.interface),
                    "version": .string(service.version), "methods": .array(service.methods.map(JSONValue.string)),
                ])
            })
        case .enable, .disable:
            let id = try args.requiredString("entry")
            try await node.loader.setDisabled(id: id, command == .disable)
            audit(session, requester, describe(request, command), entry: id)
            return entryResult(id)
        case .config:
            let id = try args.requiredString("entry")
            try await node.loader.update(id: id, config: args["config"] ?? .object(JSONObject()))
            audit(session, requester, describe(request, command), entry: id)
            return entryResult(id)
        case .add:
            let entry = try Entry(json: args["entry"] ?? .null, location: "add")
            let parent = args["parent"]?.stringValue
            try await node.loader.add(entry, parent: parent)
            audit(session, requester, "add entry \(entry.id) (\(entry.plugin))", entry: entry.id)
            return entryResult(entry.id)
        case .remove:
            let id = try args.requiredString("entry")
            try await node.loader.remove(id: id)
            audit(session, requester, describe(request, command), entry: id)
            return .object(["entry": .string(id), "removed": .bool(true)])
        case .move:
            let id = try args.requiredString("entry")
            let parent = try args.optionalString("parent")
            try await node.loader.move(id: id, toParent: parent)
            audit(session, requester, describe(request, command), entry: id)
            return entryResult(id)
        case .restart:
            let id = try args.requiredString("entry")
            try await restartEntry(id)
            audit(session, requester, describe(request, command), entry: id)
            return entryResult(id)
        case .call:
            return try await callFromConsole(args)
        case .apply:
            return try await applySignedTree(request, by: requester, from: session)
        }
    }

    private func entryResult(_ id: String) -> JSONValue {
        let status = node.loader.status.first { $0.id == id }
        return .object([
            "entry": .string(id),
            "state": status?.state.map { .string($0.rawValue) } ?? .null,
            "disabled": .bool(status?.disabled ?? false),
            "error": status?.error.map { .string($0) } ?? .null,
        ])
    }

    /// `restart`: unloads entry `id`'s fiber and loads it again, recovering a failed one; returns once
    /// it is settled (failing again is the entry's state, which the result shows).
    ///
    /// - Throws: `ControlError` `rejected` for an unknown entry or one without a fiber (disabled, its
    ///   plugin unknown or its config refused); nothing changed then.
    private func restartEntry(_ id: String) async throws {
        guard node.loader.entry(id: id) != nil else { throw ControlError("rejected", "unknown entry \"\(id)\"") }
        guard let fiber = node.loader.fiber(for: id) else {
            let reason = node.loader.status.first { $0.id == id }?.error.map { ": \($0)" } ?? " (it or a group holding it is disabled)"
            throw ControlError("rejected", "entry \"\(id)\" has no fiber to restart\(reason)")
        }
        do {
            try await fiber.restart()
        } catch {
            // Failed again, or disposed meanwhile by a change: the result reads the entry as it is now.
        }
    }

    private func callFromConsole(_ args: JSONObject) async throws -> JSONValue {
        let service = try args.requiredString("service")
        let method = try args.requiredString("method")
        let realm: Realm = args["realm"]?.stringValue.map { .label($0) } ?? .root
        guard let catalogued = node.remoteServices.service(named: service) else {
            throw ControlError("rejected", "\(service) is not a remote-capable service on \(node.name)")
        }
        guard let record = node.context.currentProvider(of: service, in: realm) else {
            throw ControlError("rejected", "no provider of \(service) in realm \(realm)")
        }
        let arguments = args["args"]?.objectValue ?? JSONObject()
        return try await catalogued.dispatch(record.value, method, arguments)
    }
}

/// A control request that cannot be served, with the code the console prints.
struct ControlError: Error {
    let code: String
    let message: String
    init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension JSONObject {
    /// The string argument `key`.
    ///
    /// - Throws: `ControlError` `bad-request` when it is absent or not a string.
    func requiredString(_ key: String) throws -> String {
        guard let value = self[key]?.stringValue else {
            throw ControlError("bad-request", "missing string argument \"\(key)\"")
        }
        return value
    }

    /// The string argument `key`, or nil when it is absent or null.
    func optionalString(_ key: String) throws -> String? {
        guard let value = self[key], value != .null else { return nil }
        guard let text = value.stringValue else {
            throw ControlError("bad-request", "argument \"\(key)\" must be a string or null")
        }
        return text
    }
}
