import Cordis
import CordisControl
import CordisWire
import Foundation

extension ClusterNode {
    /// Calls `method` of `service` through this node, as `cordis-console call` does: the node serves it
    /// from its own provider or relays it to the provider it would choose. `arguments` are keyed by
    /// argument label (`_0`, `_1`… for unlabelled ones). Returns the method's JSON result.
    ///
    /// - Throws: `RemoteCallError` with the call's code (`withdrawn`, `timeout`, `unknown-service`,
    ///   `failed`…) when the call failed; `TestKitError` when the node cannot be reached.
    public func call(
        _ service: String, _ method: String, _ arguments: JSONObject = [:], realm: String? = nil,
        timeout: Duration = .seconds(30)
    ) async throws -> JSONValue {
        var args: JSONObject = ["service": .string(service), "method": .string(method), "args": .object(arguments)]
        if let realm { args["realm"] = .string(realm) }
        let client = try await control()
        do {
            return try await client.request(.call, args: args, timeout: timeout)
        } catch let refusal as ControlFailure {
            throw RemoteCallError(RemoteCallError.Code(rawValue: refusal.code), refusal.message)
        } catch let error as ControlClientError {
            throw RemoteCallError(.timeout, "\(name): \(error)")
        } catch {
            throw failure(.notRunning, "\(name) did not answer the call \(service).\(method)", underlying: error)
        }
    }

    /// The `@Remote` service of `Key` as this node serves it, typed: each method call is a `call` through
    /// the kit's link to this node (`call(_:_:_:realm:timeout:)`), so the test uses the service as a
    /// consumer on this node would.
    public func service<Key: RemoteServiceKey>(_ key: Key.Type, realm: String? = nil) -> Key.Value {
        Key.Interface.proxy(ConsoleEndpoint(node: self, service: Key.name, realm: realm))
    }
}

/// Where the test's typed proxies send their calls: a node's `call` command.
struct ConsoleEndpoint: RemoteEndpoint {
    let node: ClusterNode
    let service: String
    let realm: String?

    nonisolated(nonsending) func call(method: String, arguments: JSONObject) async throws -> JSONDocument {
        JSONDocument(try await node.call(service, method, arguments, realm: realm))
    }
}

extension ClusterNode {
    /// Replaces entry `entry`'s config (as `cordis-console config NODE:ENTRY JSON`); returns once the node
    /// applied it (its fibers on this node settled).
    ///
    /// - Throws: `TestKitError` `.refused` with the node's reason (a rejected config, an unknown entry).
    public func setConfig(_ entry: String, _ config: JSONValue) async throws {
        _ = try await request(.config, args: ["entry": .string(entry), "config": config])
    }

    /// Replaces entry `entry`'s config with `config` encoded as JSON.
    public func setConfig<Config: Encodable>(_ entry: String, _ config: Config) async throws {
        let value: JSONValue
        do { value = try JSONValueEncoder().encode(config) } catch {
            throw failure(.invalidArgument, "the config of \(entry) does not encode", underlying: error)
        }
        try await setConfig(entry, value)
    }

    /// Enables entry `entry`.
    public func enable(_ entry: String) async throws {
        _ = try await request(.enable, args: ["entry": .string(entry)])
    }

    /// Disables entry `entry` (its fiber is disposed, its services withdrawn in order).
    public func disable(_ entry: String) async throws {
        _ = try await request(.disable, args: ["entry": .string(entry)])
    }

    /// Restarts entry `entry`'s fiber.
    public func restart(_ entry: String) async throws {
        _ = try await request(.restart, args: ["entry": .string(entry)])
    }

    /// Adds `entry` (a plugin entry or a group with its children) at the top level or in group `parent`.
    public func add(_ entry: Entry, parent: String? = nil) async throws {
        var args: JSONObject = ["entry": entry.json()]
        if let parent { args["parent"] = .string(parent) }
        _ = try await request(.add, args: args)
    }

    /// Removes entry `entry`.
    public func remove(_ entry: String) async throws {
        _ = try await request(.remove, args: ["entry": .string(entry)])
    }

    /// Writes `entries` as the node's entries file and tells it to re-read it (SIGHUP), as an operator
    /// editing the file would. The node reconciles asynchronously: await the states that follow.
    public func replaceEntries(_ entries: [Entry]) throws {
        do { try FileEntryStore(url: entriesFile).save(entries) } catch {
            throw failure(.invalidArgument, "cannot write the entries of \(name)", underlying: error)
        }
        process.signal(SIGHUP)
    }
}
