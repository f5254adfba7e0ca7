import CordisJSON
import CordisNode
import Testing

/// The security flags of `cordis-node`: `--operators`, `--trusted-keys`, `--require-signed-trees`,
/// on the command line and in a config file, and the rule between the last two.
@Suite("Security flags")
struct SecurityOptionsTests {
    static func options(_ arguments: [String], config: String? = nil) throws -> NodeOptions {
        let parser = NodeOptionsParser(readFile: { _ in Array((config ?? "{}").utf8) })
        guard case .run(let options) = try parser.parse(["--name", "a", "--entries", "a.json"] + arguments) else {
            Issue.record("no options")
            return NodeOptions(name: "", entriesFile: "")
        }
        return options
    }

    @Test("the flags set the operators file, the trusted keys and the signed-trees requirement")
    func flags() throws {
        let options = try Self.options(["--operators", "ops.json", "--trusted-keys", "keys.pem", "--require-signed-trees"])
        #expect(options.operatorsFile == "ops.json")
        #expect(options.trustedKeysFile == "keys.pem")
        #expect(options.requireSignedTrees)
        let plain = try Self.options([])
        #expect(plain.operatorsFile == nil && plain.trustedKeysFile == nil && !plain.requireSignedTrees)
    }

    @Test("a config file sets them too, under the flag names")
    func configFile() throws {
        let options = try Self.options(
            ["--config", "c.json"],
            config: #"{"operators": "ops.json", "trusted-keys": "keys.pem", "require-signed-trees": true}"#)
        #expect(options.operatorsFile == "ops.json")
        #expect(options.requireSignedTrees)
        #expect(throws: NodeOptionsError.self) {
            _ = try Self.options(["--config", "c.json"], config: #"{"trusted-keys": "k.pem", "require-signed-trees": "yes"}"#)
        }
    }

    @Test("--require-signed-trees without --trusted-keys is refused: no tree could ever change the node")
    func requireNeedsKeys() {
        #expect(throws: NodeOptionsError.self) { _ = try Self.options(["--require-signed-trees"]) }
    }

    @Test("--help lists the security flags")
    func usage() {
        let text = NodeUsage.text()
        for flag in ["--operators FILE", "--trusted-keys FILE", "--require-signed-trees"] { #expect(text.contains(flag)) }
    }
}
