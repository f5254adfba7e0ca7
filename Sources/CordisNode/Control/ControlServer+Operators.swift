import Cordis
import CordisWire
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Operators and roles: who a console is, what its role lets it do, the refusal of a console the
/// operators file does not list (at the handshake), and the audit of every change, applied or refused.
extension ControlServer {
    /// Wraps `configuration` so that a peer on a Unix socket that is neither this node's user nor root
    /// is refused the node role (`Admission.mayHoldNodeRole`), and, when an operators file is in force, a
    /// console it does not list is refused; either learns only that it is not admitted (a console also
    /// who it was seen as, and how to be admitted).
    /// `connection` gives the peer's Unix credentials.
    nonisolated static func admittingPeers(
        _ configuration: HandshakeConfiguration, on connection: Connection, operators table: OperatorTable,
        throttle logger: LogThrottle
    ) -> HandshakeConfiguration {
        var wrapped = configuration
        let earlier = configuration.admit
        let credentials = connection.credentials
        // Inside TLS the secret is not used: the certificate (which the handshake name matches) is
        // the console's identity.
        let overTLS = connection.tls != nil
        let provesSecret = configuration.secrets != nil && !overTLS
        wrapped.admit = { peer in
            if peer.role == .node, let credentials, !Admission.mayHoldNodeRole(credentials, ownUID: geteuid()) {
                logger.log(
                    .warn, kind: "nodeRoleRefused",
                    "refused the node role to uid \(credentials.uid) (\(peer.name), \(connection.origin)): on a Unix "
                        + "socket only this node's user and root are members; others connect as consoles",
                    fields: [("CORDIS_PEER", peer.name)])
                return Rejection(code: WireError.Code.notAdmitted.rawValue, reason: "this peer is not admitted here")
            }
            if let refusal = earlier?(peer) { return refusal }
            guard peer.role == .console else { return nil }
            let identity = OperatorIdentity(
                credentials: credentials, provedSecret: provesSecret, certificateName: overTLS ? peer.name : nil,
                accounts: table.file?.accounts ?? AccountNames())
            guard !ControlPermission.admitsConsole(role: table.role(of: identity), operatorsFile: table.file != nil) else {
                return nil
            }
            logger.log(
                .warn, kind: "operatorRefused",
                "refused console \(peer.name) (\(identity.name), \(connection.origin)): not listed in the operators file",
                fields: [("CORDIS_OPERATOR", identity.name), ("CORDIS_PEER", peer.name)])
            return Rejection(code: WireError.Code.notAdmitted.rawValue, reason: Self.notAdmittedReason(identity))
        }
        return wrapped
    }

    /// What a console the operators file does not list is told: who it was seen as (its own identities,
    /// nothing of the node's), within `Rejection.maximumReasonLength`. The console adds how to be admitted.
    nonisolated static func notAdmittedReason(_ identity: OperatorIdentity) -> String {
        let refusal = "this console is not admitted here"
        guard !identity.identities.isEmpty else { return refusal + "; it has no identity" }
        var text = refusal + "; seen as "
        for (index, name) in identity.identities.enumerated() {
            let piece = (index == 0 ? "" : ", ") + name
            guard text.utf8.count + piece.utf8.count <= Rejection.maximumReasonLength - 8 else {
                text += ", …"
                break
            }
            text += piece
        }
        return text
    }

    /// The operator behind a request: the console's own identity (from numbers and the operators
    /// file's resolved names only), or the one a member relayed. Nil for a member's own request (a
    /// status question, an event subscription), which members may always make.
    func requester(of request: ControlRequest, from session: PeerSession) -> OperatorIdentity? {
        if session.role == .console {
            return operatorOfSession[session.id] ?? operatorIdentity(of: session.link)
        }
        return request.operator.map(OperatorIdentity.init)
    }

    /// The operator identity of a console's `link`, from numbers and the operators file's resolved names
    /// only (nothing is looked up).
    func operatorIdentity(of link: Link) -> OperatorIdentity {
        let handshake = link.handshake
        return OperatorIdentity(
            credentials: link.connection.credentials, provedSecret: handshake.isAuthenticated,
            certificateName: handshake.certificate?.kind == .operator ? handshake.certificate?.name : nil,
            accounts: operators.file?.accounts ?? AccountNames())
    }

    /// `requester(of:from:)`, with a Unix console's user and group names looked up once per link, on
    /// a thread of the system's (never on the event loop or this actor, which a slow directory service
    /// would stall).
    func namedRequester(of request: ControlRequest, from session: PeerSession) async -> OperatorIdentity? {
        let identity = requester(of: request, from: session)
        guard session.role == .console, operatorOfSession[session.id] == nil, let identity else { return identity }
        guard let credentials = session.link.connection.credentials else {
            operatorOfSession[session.id] = identity
            return identity
        }
        let named = await withCheckedContinuation { (continuation: CheckedContinuation<OperatorIdentity, Never>) in
            DispatchQueue.global().async { continuation.resume(returning: identity.addingAccountNames(of: credentials)) }
        }
        // Kept only while the link is: its end clears the cache.
        if session.role == .console, node.peers[session.id] != nil { operatorOfSession[session.id] = named }
        return named
    }

    /// Checks that `requester` may run `request` here, by this node's operators file and
    /// `--require-signed-trees`; a refused change is logged and published like an applied one.
    ///
    /// - Throws: `ControlError` `forbidden` (`disable needs the operator role; you are viewer`).
    func authorize(
        _ request: ControlRequest, _ command: ControlCommand, by requester: OperatorIdentity?, from session: PeerSession
    ) throws {
        let refusal = ControlPermission.refusal(
            of: command, on: node.name, requester: requester, role: requester.flatMap { operators.role(of: $0) },
            from: session.identity.name, peerRole: session.role, runsHere: request.node == nil || request.node == node.name,
            signedTreesOnly: node.configuration.security.requireSignedTrees)
        guard let refusal else { return }
        if refusal.audited {
            audit(session, requester, describe(request, command), entry: request.args["entry"]?.stringValue, refused: refusal.message)
        }
        throw ControlError("forbidden", refusal.message)
    }

    /// The entry a change names (`entry`, or an added entry's `id`), for the audit.
    static func entry(of request: ControlRequest) -> String? {
        request.args["entry"]?.stringValue ?? request.args["entry"]?["id"]?.stringValue
    }

    /// A change as the audit log words it.
    func describe(_ request: ControlRequest, _ command: ControlCommand) -> String {
        let entry = Self.entry(of: request) ?? "?"
        switch command {
        case .enable: return "enable entry \(entry)"
        case .disable: return "disable entry \(entry)"
        case .config: return "change the config of entry \(entry)"
        case .add: return "add entry \(entry)"
        case .remove: return "remove entry \(entry)"
        case .restart: return "restart entry \(entry)"
        case .move:
            if let parent = request.args["parent"]?.stringValue { return "move entry \(entry) into group \(parent)" }
            return "move entry \(entry) to the top level"
        case .forget: return "forget member \(request.args["member"]?.stringValue ?? "?")"
        case .apply: return "apply a signed tree"
        case .status, .members, .catalog, .interfaces, .subscribe, .unsubscribe, .traffic, .call: return command.rawValue
        }
    }

    /// Logs a change (`CORDIS_OPERATOR`, `CORDIS_PEER`) and publishes it as a `change` event with
    /// the operator, the peer it came through, what changed, and `refused` with the reason when it
    /// was refused.
    func audit(_ session: PeerSession, _ requester: OperatorIdentity?, _ change: String, entry: String?, refused: String? = nil) {
        let who = requester?.name ?? "member \(session.identity.name)"
        let peer: String
        if session.role == .node {
            peer = "member \(session.identity.name)"
        } else if let uid = session.link.peerUID {
            peer = "console \(session.identity.name) (uid \(uid))"
        } else {
            peer = "console \(session.identity.name) (\(session.link.connection.origin))"
        }
        var fields: [(String, String)] = [("CORDIS_OPERATOR", who), ("CORDIS_PEER", session.identity.name)]
        if let entry { fields.append(("CORDIS_ENTRY", entry)) }
        if let refused {
            node.logger.warn("refused: \(who) via \(peer): \(change): \(refused)", fields: fields)
        } else {
            node.logger.info("\(who) via \(peer): \(change)", fields: fields)
        }
        var detail = JSONObject()
        detail["operator"] = .string(who)
        detail["peer"] = .string(peer)
        detail["change"] = .string(change)
        if let entry { detail["entry"] = .string(entry) }
        detail["outcome"] = .string(refused == nil ? "applied" : "refused")
        if let refused { detail["reason"] = .string(refused) }
        publish(kind: "change", detail: detail)
    }

    /// A call a console sent as a `call` message (not through a `call` request): served when its role
    /// is `operator` or higher, else answered with a `forbidden` error.
    func serveConsoleCall(_ call: RemoteCall, from session: PeerSession) {
        let requester = requester(of: ControlRequest(id: 0, command: .call), from: session)
        if let message = ControlPermission.callRefusal(
            on: node.name, requester: requester, role: requester.flatMap { operators.role(of: $0) }) {
            session.send(RemoteCallError(RemoteCallError.Code(rawValue: "forbidden"), message).reply(to: call.id))
            return
        }
        node.serve(call, from: session)
    }

    /// Re-reads the operators file (SIGHUP). A file that cannot be read or parsed is refused and the
    /// one in force stays.
    ///
    /// - Throws: `OperatorsFileError`.
    func reloadOperators() throws {
        guard let path = node.configuration.security.operatorsFile else { return }
        let file = try OperatorsFile.load(path: path)
        operators.replace(with: file)
        node.logger.info("reloaded the operators file \(path) (\(file.roles.count) identities)")
        warnAboutClusterRole(in: file)
    }

    /// Warns when `file` gives `cluster` a role below admin on a node with a secret and a TCP listener:
    /// whoever holds the secret may also join as a member, and a member is trusted with every
    /// operator's identity.
    func warnAboutClusterRole(in file: OperatorsFile?) {
        let tcp = node.listeningAddresses.contains { if case .tcp = $0 { return true } else { return false } }
        guard node.configuration.secrets != nil, tcp, let role = file?.roles["cluster"], role < .admin else { return }
        node.logger.warn(
            "the operators file gives cluster the \(role) role, but whoever holds the cluster secret may also join as "
                + "a member, which is trusted like an admin: the secret is a node credential, keep it as one")
    }
}
