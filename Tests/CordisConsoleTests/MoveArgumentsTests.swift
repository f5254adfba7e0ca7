import Testing
@testable import CordisConsole

@Suite("The move command line")
struct MoveArgumentsTests {
    @Test("move NODE:ENTRY --parent ENTRY moves into that group; without --parent, to the top level")
    func moveParses() throws {
        #expect(try ConsoleArguments(parsing: ["move", "b:greeter", "--parent", "grp"]).command
            == .move(try EntryReference(parsing: "b:greeter"), parent: "grp"))
        #expect(try ConsoleArguments(parsing: ["move", "b:greeter"]).command
            == .move(try EntryReference(parsing: "b:greeter"), parent: nil))
    }

    @Test("move without NODE:ENTRY, with a bad parent id or an option of another command is a usage error")
    func moveUsageErrors() {
        for words in [["move"], ["move", "greeter"], ["move", "b:greeter", "--parent", "no way"], ["move", "b:greeter", "--id", "x"],
                      ["move", "b:greeter", "--parent", "a", "--parent", "b"]] {
            #expect(throws: ConsoleError.self, "\(words)") { try ConsoleArguments(parsing: words) }
        }
    }
}
