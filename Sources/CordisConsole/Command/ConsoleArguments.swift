import CordisControl
import CordisJSON
import CordisWire

/// The parsed command line of `cordis-console`: the global options and the command.
public struct ConsoleArguments: Sendable, Hashable {
    /// `--node ADDR` (else `$CORDIS_CONSOLE_NODE`).
    public var node: String?
    /// `--secret-file FILE`.
    public var secretFile: String?
    /// `--tls-cert FILE` (else `$CORDIS_CONSOLE_TLS_CERT`): the operator's certificate.
    public var tlsCertificate: String?
    /// `--tls-key FILE` (else `$CORDIS_CONSOLE_TLS_KEY`).
    public var tlsKey: String?
    /// `--tls-ca FILE` (else `$CORDIS_CONSOLE_TLS_CA`): the cluster's CA certificates.
    public var tlsCA: String?
    /// `--timeout S`: bounds every request (default 10 s).
    public var timeout: Double = 10
    /// `--json`: machine output.
    public var json = false
    /// The command.
    public var command: ConsoleCommand = .help

    /// The usage text printed by `--help` and after a usage error.
    public static let usage = """
        usage: cordis-console [--node ADDR] [--secret-file FILE] [--tls-cert FILE --tls-key FILE --tls-ca FILE] [--timeout S] [--json] COMMAND
          status [--on NODE]          every node (or one): entries and fibers, reachability
          graph [--format text|dot]   the cluster-wide fiber graph
          watch                       live full-screen view (q or Ctrl-C to leave)
          events [--follow] [--on NODE]
          catalog [--on NODE]         plugins each node can run, with their config fields
          members                     the cluster's members as the node reached sees them
          --discovery etcd:URL[,URL...] members
                                      the members and their services straight from etcd
          enable NODE:ENTRY | disable NODE:ENTRY
          config NODE:ENTRY [JSON]    set the entry's config; without JSON print the config it has (as stored)
          add NODE [--parent ENTRY] --id ID --plugin NAME [--config JSON] [--isolate SERVICE[=LABEL]]... [--disabled]
          remove NODE:ENTRY
          move NODE:ENTRY [--parent ENTRY]
                                      into the group ENTRY (without --parent: to the top level)
          restart NODE:ENTRY          unload the entry's fiber and load it again (recovers a failed plugin)
          call SERVICE METHOD [JSON-ARGS] [--realm LABEL]
          traffic [--on NODE]         messages each node sent and received, by kind
          forget NODE                 drop a decommissioned member from the cluster's view
          sign --key FILE --node NODE [--version N] [--expires DURATION] TREE.json   print a signed tree
          apply SIGNED.json           send a signed tree to the node it names
          web [--listen HOST:PORT] [--web-tls-cert FILE --web-tls-key FILE]
                                      serve the web console (default 127.0.0.1:0: a free port; HTTPS with the
                                      certificate, which another address than loopback needs); prints its URL
          --version                   print the version
        --node defaults to $CORDIS_CONSOLE_NODE, --tls-cert, --tls-key and --tls-ca to
        $CORDIS_CONSOLE_TLS_CERT, $CORDIS_CONSOLE_TLS_KEY and $CORDIS_CONSOLE_TLS_CA (an operator
        certificate: SAN URI:cordis://operator/NAME). Exit codes: 0 ok, 1 rejected or failed (a
        change that left its plugin failed included), 3 status found a problem, 64 usage, 69 no node reachable.
        """

    /// What `--version` prints: `cordis-console VERSION`.
    public static let versionLine = "cordis-console \(CordisVersion.current)"

    /// Whether `text` is a valid node name or entry id.
    public static func isName(_ text: String) -> Bool {
        guard (1...64).contains(text.utf8.count) else { return false }
        return text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    /// Parses `arguments` (without the program name); `environment` supplies `CORDIS_CONSOLE_NODE`.
    ///
    /// - Throws: `ConsoleError` `.usage` naming the problem.
    public init(parsing arguments: [String], environment: [String: String] = [:]) throws(ConsoleError) {
        var words = ArgumentWords(arguments)
        var positional: [String] = []
        var options: [String: [String]] = [:]
        var flags: Set<String> = []
        let valued: Set<String> = ["--node", "--secret-file", "--tls-cert", "--tls-key", "--tls-ca", "--timeout", "--format", "--on", "--parent", "--id",
                                   "--plugin", "--config", "--isolate", "--realm", "--key", "--version", "--expires", "--listen",
                                   "--web-tls-cert", "--web-tls-key"]
        let boolean: Set<String> = ["--json", "--follow", "--disabled", "--help", "-h"]
        while let word = words.next() {
            if word == "--" {
                while let rest = words.next() { positional.append(rest) }
                break
            }
            if word.hasPrefix("--") || word == "-h" {
                var name = word
                var inline: String?
                if let equals = word.firstIndex(of: "=") {
                    name = String(word[..<equals])
                    inline = String(word[word.index(after: equals)...])
                }
                // `--version` takes a value only as an option of `sign`; anywhere else it asks for the version.
                if name == "--version", inline == nil, positional.first != "sign" {
                    flags.insert(name)
                    continue
                }
                if valued.contains(name) {
                    guard let value = inline ?? words.next() else {
                        throw ConsoleError(.usage, "\(name) needs a value")
                    }
                    options[name, default: []].append(value)
                } else if boolean.contains(name), inline == nil {
                    flags.insert(name)
                } else {
                    throw ConsoleError(.usage, "unknown option \(name)")
                }
                continue
            }
            positional.append(word)
        }
        func single(_ name: String) throws(ConsoleError) -> String? {
            guard let values = options[name] else { return nil }
            guard values.count == 1 else { throw ConsoleError(.usage, "\(name) given more than once") }
            return values[0]
        }
        // `sign --node NODE` names the node the tree is for; sign reaches no node.
        let signing = positional.first == "sign"
        node = signing ? nil : try single("--node") ?? environment["CORDIS_CONSOLE_NODE"].flatMap { $0.isEmpty ? nil : $0 }
        secretFile = try single("--secret-file")
        func setting(_ flag: String, _ variable: String) throws(ConsoleError) -> String? {
            try single(flag) ?? environment[variable].flatMap { $0.isEmpty ? nil : $0 }
        }
        tlsCertificate = try setting("--tls-cert", "CORDIS_CONSOLE_TLS_CERT")
        tlsKey = try setting("--tls-key", "CORDIS_CONSOLE_TLS_KEY")
        tlsCA = try setting("--tls-ca", "CORDIS_CONSOLE_TLS_CA")
        let tls = [("--tls-cert", tlsCertificate), ("--tls-key", tlsKey), ("--tls-ca", tlsCA)]
        let missing = tls.filter { $0.1 == nil }.map(\.0)
        if !missing.isEmpty, missing.count < tls.count, !signing {
            throw ConsoleError(
                .usage,
                "TLS needs all three of --tls-cert, --tls-key and --tls-ca (or their CORDIS_CONSOLE_TLS_* "
                    + "variables); \(missing.joined(separator: " and ")) " + (missing.count == 1 ? "is" : "are") + " missing")
        }
        if let text = try single("--timeout") {
            guard let seconds = Double(text) else {
                throw ConsoleError(.usage, "--timeout must be a positive number of seconds, not \"\(text)\"")
            }
            do {
                _ = try ControlTimeout.parse(seconds)
            } catch {
                throw ConsoleError(.usage, "--timeout \(error.message), not \"\(text)\"")
            }
            timeout = seconds
        }
        json = flags.contains("--json")
        if flags.contains("--help") || flags.contains("-h") {
            command = .help
            return
        }
        if flags.contains("--version") {
            command = .version
            return
        }
        guard let name = positional.first else { throw ConsoleError(.usage, "no command given") }
        let rest = Array(positional.dropFirst())
        var allowed: Set<String> = ["--node", "--secret-file", "--tls-cert", "--tls-key", "--tls-ca", "--timeout", "--json"]
        func expect(_ count: Int, _ shape: String) throws(ConsoleError) {
            guard rest.count == count else { throw ConsoleError(.usage, "\(name) takes \(shape)") }
        }
        switch name {
        case "status":
            try expect(0, "no arguments besides --on NODE")
            allowed.insert("--on")
            command = .status(on: try Self.nodeName(single("--on")))
        case "graph":
            try expect(0, "no arguments besides --format")
            allowed.insert("--format")
            let text = try single("--format") ?? "text"
            guard let format = ConsoleCommand.GraphFormat(rawValue: text) else {
                throw ConsoleError(.usage, "--format must be text or dot, not \"\(text)\"")
            }
            command = .graph(format)
        case "watch":
            try expect(0, "no arguments")
            command = .watch
        case "events":
            try expect(0, "no arguments besides --follow and --on NODE")
            allowed.formUnion(["--follow", "--on"])
            command = .events(follow: flags.contains("--follow"), on: try Self.nodeName(single("--on")))
        case "catalog":
            try expect(0, "no arguments besides --on NODE")
            allowed.insert("--on")
            command = .catalog(on: try Self.nodeName(single("--on")))
        case "members":
            try expect(0, "no arguments")
            command = .members
        case "enable", "disable":
            try expect(1, "NODE:ENTRY")
            command = .setDisabled(try EntryReference(parsing: rest[0]), name == "disable")
        case "config":
            guard rest.count == 1 || rest.count == 2 else { throw ConsoleError(.usage, "config takes NODE:ENTRY [JSON]") }
            let reference = try EntryReference(parsing: rest[0])
            command = rest.count == 1 ? .showConfig(reference) : .config(reference, try Self.json(rest[1], what: "the config"))
        case "remove":
            try expect(1, "NODE:ENTRY")
            command = .remove(try EntryReference(parsing: rest[0]))
        case "move":
            try expect(1, "NODE:ENTRY [--parent ENTRY]")
            allowed.insert("--parent")
            let parent = try single("--parent")
            if let parent, !Self.isName(parent) {
                throw ConsoleError(.usage, "--parent \"\(parent)\" is not an entry id (1-64 characters of A-Z a-z 0-9 . _ -)")
            }
            command = .move(try EntryReference(parsing: rest[0]), parent: parent)
        case "restart":
            try expect(1, "NODE:ENTRY")
            command = .restart(try EntryReference(parsing: rest[0]))
        case "traffic":
            try expect(0, "no arguments besides --on NODE")
            allowed.insert("--on")
            command = .traffic(on: try Self.nodeName(single("--on")))
        case "forget":
            try expect(1, "NODE")
            guard let member = try Self.nodeName(rest[0]) else { throw ConsoleError(.usage, "forget takes NODE") }
            command = .forget(member)
        case "add":
            try expect(1, "NODE and options")
            allowed.formUnion(["--parent", "--id", "--plugin", "--config", "--isolate", "--disabled"])
            command = try Self.add(node: rest[0], single: single, options: options, disabled: flags.contains("--disabled"))
        case "call":
            guard rest.count == 2 || rest.count == 3 else {
                throw ConsoleError(.usage, "call takes SERVICE METHOD [JSON-ARGS]")
            }
            allowed.insert("--realm")
            let args = try rest.count == 3 ? Self.callArguments(rest[2]) : JSONObject()
            command = .call(service: rest[0], method: rest[1], args: args, realm: try single("--realm"))
        case "sign":
            try expect(1, "--key FILE --node NODE [--version N] [--expires DURATION] TREE.json")
            allowed.formUnion(["--key", "--version", "--expires"])
            guard let key = try single("--key") else { throw ConsoleError(.usage, "sign needs --key FILE (a PEM Ed25519 private key)") }
            guard let target = try Self.nodeName(single("--node")) else { throw ConsoleError(.usage, "sign needs --node NODE") }
            var version: Int64?
            if let text = try single("--version") {
                guard let number = Int64(text), number > 0 else {
                    throw ConsoleError(.usage, "--version must be a positive integer, not \"\(text)\"")
                }
                version = number
            }
            let expires = try Self.duration(try single("--expires") ?? "7d")
            command = .sign(key: key, node: target, version: version, expires: expires, tree: rest[0])
        case "web":
            try expect(0, "no arguments besides --listen HOST:PORT, --web-tls-cert FILE and --web-tls-key FILE")
            allowed.formUnion(["--listen", "--web-tls-cert", "--web-tls-key"])
            command = try Self.web(listen: try single("--listen") ?? "127.0.0.1:0", certificate: single("--web-tls-cert"), key: single("--web-tls-key"))
        case "apply":
            try expect(1, "SIGNED.json")
            command = .apply(rest[0])
        default:
            throw ConsoleError(.usage, "unknown command \"\(name)\"")
        }
        let stray = Set(options.keys).union(flags).subtracting(allowed)
        if let option = stray.sorted().first {
            throw ConsoleError(.usage, "\(option) does not apply to \(name)")
        }
    }

    /// `web`'s options: `--listen HOST:PORT` (a TCP address), and the HTTPS certificate and key, both or
    /// neither, which a host other than loopback needs.
    static func web(listen: String, certificate: String?, key: String?) throws(ConsoleError) -> ConsoleCommand {
        let host: String
        do {
            guard case .tcp(let parsed, _) = try Address(parsing: "tcp:" + listen) else {
                throw ConsoleError(.usage, "--listen takes HOST:PORT")
            }
            host = parsed
        } catch let error as ConsoleError {
            throw error
        } catch {
            throw ConsoleError(.usage, "--listen takes HOST:PORT (127.0.0.1:8080, [::1]:0, 0.0.0.0:8443), not \"\(listen)\": \(error)")
        }
        guard (certificate == nil) == (key == nil) else {
            throw ConsoleError(.usage, "HTTPS needs both --web-tls-cert and --web-tls-key")
        }
        if certificate == nil, !isLoopback(host) {
            throw ConsoleError(
                .usage,
                "--listen \(listen) is not a loopback address: serving other hosts needs HTTPS (--web-tls-cert FILE "
                    + "--web-tls-key FILE), or listen on 127.0.0.1 and reach it through an SSH tunnel")
        }
        return .web(listen: listen, certificate: certificate, key: key)
    }

    /// Whether `host` is a loopback address (`127.0.0.0/8`, `::1`, `localhost`).
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// A duration: a whole number with `s`, `m`, `h` or `d` (`7d`, `12h`), or plain seconds; at most
    /// ten years.
    static func duration(_ text: String) throws(ConsoleError) -> Double {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var digits = Substring(text)
        var unit = 1.0
        if let last = text.last, let scale = units[last] {
            digits = text.dropLast()
            unit = scale
        }
        guard let count = UInt32(digits), count > 0, Double(count) * unit <= 10 * 365 * 86_400 else {
            throw ConsoleError(.usage, "--expires must be a duration like 7d, 12h, 30m or 90s (at most ten years), not \"\(text)\"")
        }
        return Double(count) * unit
    }

    private static func nodeName(_ text: String?) throws(ConsoleError) -> String? {
        guard let text else { return nil }
        guard isName(text) else {
            throw ConsoleError(.usage, "\"\(text)\" is not a node name (1-64 characters of A-Z a-z 0-9 . _ -)")
        }
        return text
    }

    private static func json(_ text: String, what: String) throws(ConsoleError) -> JSONValue {
        do {
            return try JSONParser().parse(Array(text.utf8))
        } catch {
            throw ConsoleError(.usage, "\(what) is not valid JSON: \(error)")
        }
    }

    /// JSON-ARGS: an object keyed by argument label, an array for unlabelled arguments (`_0`, `_1`…),
    /// or a single value for one unlabelled argument.
    private static func callArguments(_ text: String) throws(ConsoleError) -> JSONObject {
        switch try json(text, what: "JSON-ARGS") {
        case .object(let object): return object
        case .array(let items): return JSONObject(items.enumerated().map { ("_\($0.offset)", $0.element) })
        case let value: return JSONObject([("_0", value)])
        }
    }

    private static func add(
        node: String, single: (String) throws(ConsoleError) -> String?, options: [String: [String]], disabled: Bool
    ) throws(ConsoleError) -> ConsoleCommand {
        guard isName(node) else { throw ConsoleError(.usage, "\"\(node)\" is not a node name") }
        guard let id = try single("--id") else { throw ConsoleError(.usage, "add needs --id ID") }
        guard let plugin = try single("--plugin") else { throw ConsoleError(.usage, "add needs --plugin NAME") }
        var entry = JSONObject()
        entry["id"] = .string(id)
        entry["plugin"] = .string(plugin)
        if disabled { entry["disabled"] = .bool(true) }
        if let specs = options["--isolate"] {
            var isolate = JSONObject()
            for spec in specs {
                if let equals = spec.firstIndex(of: "=") {
                    let service = String(spec[..<equals])
                    let label = String(spec[spec.index(after: equals)...])
                    guard !service.isEmpty, !label.isEmpty else {
                        throw ConsoleError(.usage, "--isolate takes SERVICE or SERVICE=LABEL, not \"\(spec)\"")
                    }
                    isolate[service] = .string(label)
                } else {
                    guard !spec.isEmpty else { throw ConsoleError(.usage, "--isolate needs a service name") }
                    isolate[spec] = .bool(true)
                }
            }
            entry["isolate"] = .object(isolate)
        }
        if let config = try single("--config") { entry["config"] = try json(config, what: "--config") }
        return .add(node: node, parent: try single("--parent"), entry: entry)
    }
}

/// The words of a command line, taken one at a time.
struct ArgumentWords {
    private var words: [String]
    private var index = 0

    init(_ words: [String]) { self.words = words }

    mutating func next() -> String? {
        guard index < words.count else { return nil }
        defer { index += 1 }
        return words[index]
    }
}
