import Cordis
import CordisSigning
import CordisWire
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// `apply`: a signed plugin tree, checked rule by rule (shape, size, signature by a trusted key, node
/// name, validity window, freshness, then the entries through the Loader's own validation) and
/// reconciled in one change. Its version is recorded durably beside the entries file before the tree
/// is reconciled, so an applied tree is never left with an older version on record (a crash, a full
/// disk): a tree whose version cannot be recorded is refused, and the record is put back when the
/// Loader refuses the tree.
extension ControlServer {
    /// Applies the signed tree in `request.args["envelope"]`.
    ///
    /// - Throws: `ControlError` `rejected` whose message names the rule broken
    ///   (`signed tree refused (freshness): …`); nothing changed then.
    func applySignedTree(_ request: ControlRequest, by requester: OperatorIdentity?, from session: PeerSession) async throws -> JSONValue {
        guard !applyingSignedTree else {
            throw ControlError("busy", "another signed tree is being applied on \(node.name); try again")
        }
        applyingSignedTree = true
        defer { applyingSignedTree = false }
        let security = node.configuration.security
        do {
            guard let trusted = trustedKeys, let applied = security.appliedVersion else {
                throw SignedTreeError(.signature, "\(node.name) trusts no signing key (start it with --trusted-keys FILE)")
            }
            let envelope = try SignedTree(json: request.args["envelope"] ?? .null)
            // The highest version recorded, in this run or before it: a record file put back from
            // an older copy does not reopen a replay while the node runs.
            let last = max(try applied.read(), highestSignedVersion)
            let payload = try envelope.verify(
                trusted: trusted, node: node.name, now: Date().timeIntervalSince1970, lastVersion: last)
            let tree: EntryTree
            do {
                tree = try EntryTree(json: .object(["version": 1, "entries": .array(payload.entries)]))
            } catch {
                throw SignedTreeError(.content, "\(error)")
            }
            let previous = try applied.contents()
            try applied.write(payload.version, keyID: envelope.keyID, at: Int64(Date().timeIntervalSince1970))
            do {
                try await node.loader.replace(with: tree)
            } catch {
                // Nothing changed: the record is put back (if that fails the version stays used up,
                // which is safe).
                do {
                    try applied.restore(previous)
                } catch let failure {
                    node.logger.warn("signed tree version \(payload.version) stays recorded though not applied: \(failure)")
                }
                if let error = error as? LoaderError, error.code != .saveFailed, error.code != .notRunning {
                    throw SignedTreeError(.content, error.message)
                }
                throw error
            }
            highestSignedVersion = max(highestSignedVersion, payload.version)
            let change = "apply signed tree version \(payload.version) (key \(envelope.keyID), \(tree.allEntries.count) entries)"
            let result: JSONObject = [
                "node": .string(node.name), "version": .integer(payload.version), "keyId": .string(envelope.keyID),
                "entries": .integer(tree.allEntries.count),
            ]
            audit(session, requester, change, entry: nil)
            return .object(result)
        } catch let error as SignedTreeError {
            audit(session, requester, "apply a signed tree", entry: nil, refused: error.description)
            throw ControlError("rejected", error.description)
        } catch let error as LoaderError {
            audit(session, requester, "apply a signed tree", entry: nil, refused: error.message)
            throw error
        }
    }

    /// SIGHUP: re-reads the trusted keys; a file that cannot be read leaves the keys in force.
    func reloadTrustedKeys() {
        guard let path = node.configuration.security.trustedKeysFile else { return }
        do {
            trustedKeys = try TrustedKeys.load(path: path)
            node.logger.info("reloaded the trusted keys \(path)")
        } catch {
            node.logger.error("trusted keys reload refused, the previous keys stay in force: \(error)")
        }
    }
}
