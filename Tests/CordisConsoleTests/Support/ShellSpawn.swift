import CordisProcessTesting
import Foundation

/// Runs `command` with `/bin/sh -c` and awaits its end; returns its exit code, or -1 when it could not
/// start, was killed by a signal, or ran past `deadline` (it is killed then).
///
/// The shell is the harness's `ChildProcess`: it gets stdin, stdout and stderr only (every other
/// descriptor is closed in the child) and is reaped on a thread of its own, so no cooperative thread
/// blocks waiting for it. A tmux server started from here outlives the command, and whatever it
/// inherited stayed open with it: a console's pipe or its exit-watch socket, caught while that console
/// was being started on another thread, kept the console's run from ever seeing its end.
@discardableResult
func runShell(_ command: String, deadline: Duration = .seconds(60)) async -> Int32 {
    guard let run = try? await ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", command], deadline: deadline),
          let termination = run.termination, termination.reason == .exit
    else { return -1 }
    return termination.status
}
