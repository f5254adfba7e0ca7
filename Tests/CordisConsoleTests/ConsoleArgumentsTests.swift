import CordisJSON
import Testing
@testable import CordisConsole

@Suite("ConsoleArguments")
struct ConsoleArgumentsTests {
    @Test("the node defaults to CORDIS_CONSOLE_NODE and --node overrides it")
    func nodeDefaultsToEnvironment() throws {
        let fromEnvironment = try ConsoleArguments(parsing: ["status"], environment: ["CORDIS_CONSOLE_NODE": "unix:/x.sock"])
        #expect(fromEnvironment.node == "unix:/x.sock")
        let given = try ConsoleArguments(parsing: ["--node", "tcp:h:1", "status", "--json"], environment: ["CORDIS_CONSOLE_NODE": "unix:/x.sock"])
        #expect(given.node == "tcp:h:1")
        #expect(given.json)
        #expect(given.command == .status(on: nil))
        #expect(try ConsoleArguments(parsing: ["status", "--on", "b"], environment: [:]).command == .status(on: "b"))
    }

    @Test("add reads isolate as a private realm or a shared label, and the config as JSON")
    func addBuildsEntry() throws {
        let parsed = try ConsoleArguments(parsing: [
            "add", "b", "--parent", "grp", "--id", "c1", "--plugin", "counter", "--config", #"{"start":3}"#,
            "--isolate", "counter=blue", "--isolate", "clock", "--disabled",
        ])
        guard case .add(let node, let parent, let entry) = parsed.command else {
            Issue.record("expected add, got \(parsed.command)")
            return
        }
        #expect(node == "b")
        #expect(parent == "grp")
        #expect(entry["id"] == "c1")
        #expect(entry["disabled"] == true)
        #expect(entry["isolate"] == ["counter": "blue", "clock": true])
        #expect(entry["config"] == ["start": 3])
    }

    @Test("call turns an array of arguments into unlabelled _0, _1")
    func callArguments() throws {
        let parsed = try ConsoleArguments(parsing: ["call", "counter", "add", "[2]", "--realm", "blue"])
        #expect(parsed.command == .call(service: "counter", method: "add", args: ["_0": 2], realm: "blue"))
    }

    @Test("bad command lines are usage errors with exit code 64", arguments: [
        [], ["frobnicate"], ["enable", "no-colon"], ["enable", "a:b c"], ["status", "--follow"],
        ["graph", "--format", "svg"], ["config", "a:b", "{not json"], ["add", "b", "--id", "x"],
        ["--timeout", "0", "status"], ["--node"],
    ])
    func usageErrors(arguments: [String]) {
        #expect(throws: ConsoleError.self) { try ConsoleArguments(parsing: arguments) }
        do {
            _ = try ConsoleArguments(parsing: arguments)
        } catch {
            #expect(error.exitCode == 64)
        }
    }

    @Test("sign takes --key, --node (the node the tree is for, not one to reach), --version and --expires; apply takes a file")
    func signAndApply() throws {
        let sign = try ConsoleArguments(
            parsing: ["sign", "--key", "k.pem", "--node", "a", "--version", "9", "--expires", "12h", "tree.json"],
            environment: ["CORDIS_CONSOLE_NODE": "unix:/x.sock"])
        #expect(sign.command == .sign(key: "k.pem", node: "a", version: 9, expires: 43_200, tree: "tree.json"))
        #expect(sign.node == nil)
        let defaults = try ConsoleArguments(parsing: ["sign", "--key", "k.pem", "--node", "a", "t.json"])
        #expect(defaults.command == .sign(key: "k.pem", node: "a", version: nil, expires: 7 * 86_400, tree: "t.json"))
        #expect(throws: ConsoleError.self) { try ConsoleArguments(parsing: ["sign", "--node", "a", "t.json"]) }
        #expect(throws: ConsoleError.self) { try ConsoleArguments(parsing: ["sign", "--key", "k", "--node", "a", "--expires", "-1d", "t"]) }
        #expect(throws: ConsoleError.self) { try ConsoleArguments(parsing: ["sign", "--key", "k", "--node", "a", "--version", "0", "t"]) }
        #expect(try ConsoleArguments(parsing: ["apply", "s.json"]).command == .apply("s.json"))
        #expect(throws: ConsoleError.self) { try ConsoleArguments(parsing: ["apply"]) }
    }

    @Test("the usage text names every command, and --discovery for listing the members from etcd")
    func usageNamesDiscovery() {
        for word in ["status", "graph", "watch", "events", "catalog", "members", "enable", "config", "add", "remove", "call", "forget"] {
            #expect(ConsoleArguments.usage.contains("  \(word)"), "\(word)")
        }
        #expect(ConsoleArguments.usage.contains("--discovery etcd:URL[,URL...] members"))
    }
}
