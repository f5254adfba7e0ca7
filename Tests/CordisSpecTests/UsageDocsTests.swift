import CordisProcessTesting
import Foundation
import Testing

/// `docs/operations.md` against the binaries: every flag and command their usage prints is documented,
/// with the exit codes, and no user-facing page cites a file users do not have.
@Suite("The operations page documents every command of both binaries")
struct UsageDocsTests {
    static func help(_ binary: String) async throws -> String {
        let run = try await ProgramRun.run(
            NodeProcess.productsDirectory.appendingPathComponent(binary), ["--help"], deadline: .seconds(30))
        #expect(run.status == 0, "\(binary) --help exited \(run.status)")
        return run.output
    }

    /// Every `--flag` in `text`.
    static func flags(in text: String) -> Set<String> {
        Set(text.matches(of: /--[a-z][a-z-]*[a-z]/).map { String($0.output) })
    }

    @Test("every flag cordis-node --help prints is on the operations page, and so are its exit codes")
    func nodeFlagsAreDocumented() async throws {
        let usage = try await Self.help("cordis-node")
        let page = try Repository.text("docs/operations.md")
        let flags = Self.flags(in: usage)
        #expect(flags.count >= 20, "\(flags)")
        for flag in flags.sorted() {
            #expect(page.contains("`\(flag)") || page.contains(" \(flag) ") || page.contains("[\(flag)"), "\(flag) is not on the page")
        }
        #expect(usage.contains("Exit codes: 0 clean stop, 1 runtime failure, 64 bad usage, 66 unreadable entries file, 69 address in use."))
        for code in ["`0`", "`1`", "`64`", "`66`", "`69`"] {
            #expect(page.contains("| \(code) |"), "the node's exit code \(code) is not in the page's table")
        }
    }

    @Test("every command line cordis-console --help prints is in the page's usage, and every flag is documented")
    func consoleCommandsAreDocumented() async throws {
        let usage = try await Self.help("cordis-console")
        let page = try Repository.text("docs/operations.md")
        let commands = usage.split(separator: "\n").dropFirst().filter { $0.hasPrefix("  ") }
        #expect(commands.count >= 12, "\(commands)")
        for line in commands {
            // The page's usage block shows the same synopsis (descriptions may differ).
            let synopsis = line.trimmingCharacters(in: .whitespaces).components(separatedBy: "   ").first ?? ""
            #expect(page.contains("  \(synopsis)"), "the console command \"\(synopsis)\" is not in the page's usage")
        }
        for flag in Self.flags(in: usage).sorted() {
            #expect(page.contains(flag), "\(flag) is not on the page")
        }
        for code in ["`0`", "`1`", "`3`", "`64`", "`69`"] {
            #expect(page.contains("| \(code) |"), "the console's exit code \(code) is not in the page's table")
        }
    }

    @Test("the README and docs cite no file that users do not have")
    func docsCiteOnlyWhatUsersHave() throws {
        let pages = ["README.md", "docs/wire-protocol.md", "docs/operations.md", "docs/security.md", "docs/concepts.md"]
        for page in pages {
            let text = try Repository.text(page)
            for citation in ["CONTRACTS", "REFERENCES.md", "ARCHITECTURE.md", "STYLE.md", "/work/"] {
                #expect(!text.contains(citation), "\(page) cites \(citation)")
            }
        }
    }
}
