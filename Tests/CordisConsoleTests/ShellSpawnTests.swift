import CordisProcessTesting
import Foundation
import Testing

/// The shell the tmux tests start (and the tmux server it may leave running) inherits none of the
/// test process's descriptors: an inherited pipe or Foundation's exit-watch socket of a console being
/// started at that moment would keep that console's run from ever seeing its end.
@Suite("Shell spawn")
struct ShellSpawnTests {
    @Test("a spawned shell holds only stdin, stdout and stderr, even of descriptors without close-on-exec")
    func shellInheritsNoDescriptors() async throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { for fd in fds { close(fd) } }
        let folder = try TestFolder()
        defer { folder.remove() }
        let listing = folder.path("fds")
        await runShell("ls /proc/$$/fd > '\(listing)'")
        let open = Set(try String(contentsOfFile: listing, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) })
        #expect(!open.contains(fds[0]) && !open.contains(fds[1]), "the shell holds \(open.sorted())")
        #expect(open.subtracting([0, 1, 2]).count <= 1, "the shell holds \(open.sorted())")
    }
}
