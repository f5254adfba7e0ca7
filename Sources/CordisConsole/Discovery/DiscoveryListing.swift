import CordisDiscovery
import CordisJSON
import CordisWire

/// `cordis-console --discovery etcd:URL[,URL...] members`: the members and the services they export,
/// read straight from etcd, so the cluster can be listed even when no node answers. With any other
/// command `--discovery` is accepted and changes nothing (the console still talks to `--node`).
enum DiscoveryListing {
    /// The command line without `--discovery` (and its value), and the discovery setting: from the flag,
    /// else `CORDIS_CONSOLE_DISCOVERY`.
    static func split(_ arguments: [String], environment: [String: String]) -> (arguments: [String], discovery: String?) {
        var rest: [String] = []
        var discovery: String?
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == "--" {
                rest += arguments[index...]
                break
            }
            if word == "--discovery", index + 1 < arguments.count {
                discovery = arguments[index + 1]
                index += 2
                continue
            }
            if word.hasPrefix("--discovery=") {
                discovery = String(word.dropFirst("--discovery=".count))
                index += 1
                continue
            }
            rest.append(word)
            index += 1
        }
        if discovery == nil, let value = environment["CORDIS_CONSOLE_DISCOVERY"], !value.isEmpty { discovery = value }
        return (rest, discovery)
    }

    /// Lists the members and services registered in etcd; returns the exit code (69 when etcd cannot be
    /// reached).
    static func run(discovery: String, json: Bool, timeout: Double, output: ConsoleOutput) async -> Int32 {
        let endpoints: [EtcdEndpoint]
        do {
            endpoints = try EtcdEndpoint.list(parsing: discovery)
        } catch {
            output.err("error: --discovery \(error.message)\n")
            return 64
        }
        let loop: EventLoop
        do {
            loop = try EventLoop(name: "cordis-console")
        } catch {
            output.err("error: \(error)\n")
            return 1
        }
        let seconds = timeout.isFinite ? min(max(timeout, 0.1), 86_400) : 10
        let client = EtcdClient(endpoints: endpoints, loop: loop, requestTimeout: .milliseconds(Int64(seconds * 1000)))
        let code = await list(client, json: json, output: output)
        // Awaited, not left to a task: the console exits next, and must not while the loop's thread runs.
        await loop.shutdown()
        return code
    }

    /// Reads the members' and services' keys through `client` and prints the members; returns the exit
    /// status.
    private static func list(_ client: EtcdClient, json: Bool, output: ConsoleOutput) async -> Int32 {
        let kvs: [EtcdKeyValue]
        do {
            // Paged, at one revision: a directory of any size is read within the answer bound.
            let members = try await client.rangePaged(prefix: "cordis/members/", maxKeys: 65_536)
            kvs = members.kvs + (try await client.rangePaged(prefix: "cordis/services/", at: members.revision, maxKeys: 65_536)).kvs
        } catch {
            output.err("error: etcd cannot be reached: \(error)\n")
            return 69
        }
        let members = listing(kvs)
        if json {
            output.out(JSONValue.object(["members": .array(members)]).jsonString(.pretty))
            return 0
        }
        var lines: [String] = []
        for member in members {
            let name = member["name"]?.stringValue ?? "?"
            let addresses = (member["addresses"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: " ")
            lines.append("\(name)  incarnation \(member["incarnation"]?.stringValue ?? "?")  \(addresses)")
            for service in member["services"]?.arrayValue ?? [] {
                let realm = service["realm"]?.stringValue.map { " realm \($0)" } ?? ""
                lines.append("  \(service["service"]?.stringValue ?? "?")\(realm)  (\(service["interface"]?.stringValue ?? "?"))")
            }
        }
        if lines.isEmpty { lines.append("no members registered in etcd") }
        output.out(lines.joined(separator: "\n") + "\n")
        return 0
    }

    /// The members (sorted by name), each with its services, from the keys under `cordis/`; keys that do
    /// not parse are skipped.
    static func listing(_ kvs: [EtcdKeyValue]) -> [JSONValue] {
        var members: [String: JSONObject] = [:]
        var services: [String: [JSONValue]] = [:]
        let parser = JSONParser()
        for kv in kvs {
            guard let value = try? parser.parse(kv.value), let object = value.objectValue else { continue }
            if kv.key.hasPrefix("cordis/members/"), let name = object["name"]?.stringValue {
                members[name] = [
                    "name": .string(name), "incarnation": object["incarnation"] ?? .null,
                    "addresses": object["addresses"] ?? .array([]), "version": object["version"] ?? .null,
                ]
            } else if kv.key.hasPrefix("cordis/services/"), let node = object["node"]?.stringValue {
                services[node, default: []].append(.object([
                    "service": object["service"] ?? .null, "realm": object["realm"] ?? .null,
                    "interface": object["interface"] ?? .null, "fiber": object["fiber"] ?? .null, "life": object["life"] ?? .null,
                ]))
            }
        }
        return members.keys.sorted().map { name in
            var member = members[name] ?? [:]
            member["services"] = .array(services[name] ?? [])
            return .object(member)
        }
    }
}
