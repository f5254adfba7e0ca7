import CordisFiles
import CordisJSON
import CordisSigning
import Foundation

/// `sign` and `apply`: a plugin tree signed with an Ed25519 key (libcrypto), and sent to its node.
enum SignedTreeCommands {
    /// `sign`: reads the tree (an entries file: `{"version": 1, "entries": [...]}` or a bare array)
    /// and the PEM private key, and prints the signed envelope. Reaches no node.
    ///
    /// - Throws: `ConsoleError` `.failed` when a file cannot be read or the tree is not an entries file.
    static func sign(
        key keyPath: String, node: String, version: Int64?, expires: Double, tree treePath: String,
        now: Date = Date(), output: ConsoleOutput
    ) throws -> Int32 {
        let key: Ed25519PrivateKey
        do {
            key = try Ed25519PrivateKey(pem: try read(keyPath, what: "--key"))
        } catch let error as SigningError {
            throw ConsoleError(.failed, "--key \(keyPath): \(error.message)")
        }
        let document: JSONValue
        do {
            document = try JSONParser().parse(try read(treePath, what: "the tree"))
        } catch let error as ConsoleError {
            throw error
        } catch {
            throw ConsoleError(.failed, "\(treePath) is not JSON: \(error)")
        }
        let entries: [JSONValue]
        switch document {
        case .array(let items): entries = items
        case .object(let object):
            guard case .array(let items)? = object["entries"] else {
                throw ConsoleError(.failed, "\(treePath) is not an entries file: it needs an \"entries\" array")
            }
            entries = items
        default:
            throw ConsoleError(.failed, "\(treePath) is not an entries file: a JSON object or array of entries")
        }
        if let version, version > SignedTree.latestVersion(at: now.timeIntervalSince1970) {
            throw ConsoleError(
                .usage,
                "--version \(version) is later than now: a version is at most the signing time in milliseconds since 1970 "
                    + "(\(SignedTree.latestVersion(at: now.timeIntervalSince1970)) now); leave it out to use the signing time")
        }
        let seconds = now.timeIntervalSince1970.rounded(.down)
        let payload = SignedTreePayload(
            node: node, version: version ?? Int64((now.timeIntervalSince1970 * 1000).rounded(.down)),
            issuedAt: seconds, expiresAt: seconds + expires, entries: entries)
        let bytes = payload.serialized()
        guard bytes.count <= SignedTree.maximumPayloadBytes else {
            throw ConsoleError(.failed, "the signed tree would be \(bytes.count) bytes; at most \(SignedTree.maximumPayloadBytes)")
        }
        let envelope: SignedTree
        do {
            envelope = try SignedTree(signing: payload, with: key)
        } catch {
            throw ConsoleError(.failed, "cannot sign: \(error.message)")
        }
        output.out(envelope.json.jsonString(.pretty) + "\n")
        return 0
    }

    /// The envelope in `path` as JSON and the node its payload names, or nil when the payload cannot
    /// be read (it then goes to the node reached, which refuses it by the rule it breaks). Nothing else
    /// is checked here: the node checks every rule.
    ///
    /// - Throws: `ConsoleError` `.failed` for a file that cannot be read or is not JSON.
    static func envelope(at path: String) throws -> (json: JSONValue, node: String?) {
        let bytes = try read(path, what: "the signed tree")
        guard let document = try? JSONParser().parse(bytes) else {
            throw ConsoleError(.failed, "\(path): signed tree refused (shape): the envelope is not JSON")
        }
        guard case .string(let text)? = document["payload"], let payload = Base64URL.decode(text),
            let object = try? JSONParser().parse(payload), case .string(let node)? = object["node"],
            ConsoleArguments.isName(node)
        else { return (document, nil) }
        return (document, node)
    }

    private static func read(_ path: String, what: String) throws -> [UInt8] {
        do {
            guard let file = try RegularFile.read(path, maxSize: 1 << 20) else {
                throw ConsoleError(.failed, "\(what) \(path): no such file")
            }
            return file.bytes
        } catch let error as ConsoleError {
            throw error
        } catch {
            throw ConsoleError(.failed, "\(what): \(error)")
        }
    }
}

extension ConsoleSession {
    /// `apply`: sends the signed tree to the node its payload names (relayed by the node reached).
    func apply(_ path: String, output: ConsoleOutput) async throws -> Int32 {
        let (envelope, node) = try SignedTreeCommands.envelope(at: path)
        let result = try await request(.apply, node: node, args: ["envelope": envelope])
        if json {
            output.out(result.jsonString(.pretty))
        } else {
            let version = result["version"]?.int64Value.map(String.init) ?? "?"
            let count = result["entries"]?.intValue.map(String.init) ?? "?"
            output.out("\(result["node"]?.stringValue ?? node ?? "?"): applied signed tree version \(version) (\(count) entries)\n")
            if let warning = result["warning"]?.stringValue { output.err("warning: \(warning)\n") }
        }
        return 0
    }
}
