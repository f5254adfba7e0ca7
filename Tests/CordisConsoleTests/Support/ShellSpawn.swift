import Foundation

/// Runs `command` with `/bin/sh -c` through posix_spawn and waits for it with waitpid; returns its
/// exit status.
///
/// The shell gets stdin, stdout and stderr only: every other descriptor is closed in the child, as
/// Foundation's `Process` does. A tmux server started from here outlives the command, and whatever it
/// inherited stayed open with it: a console's pipe or its exit-watch socket, caught while that console
/// was being started on another thread, kept the console's run from ever seeing its end.
@discardableResult
func runShell(_ command: String) -> Int32 {
    var pid: pid_t = 0
    let words: [String] = ["/bin/sh", "-c", command]
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var actions = posix_spawn_file_actions_t()
    guard posix_spawn_file_actions_init(&actions) == 0 else { return -1 }
    defer { posix_spawn_file_actions_destroy(&actions) }
    guard closeFrom(&actions, 3) == 0, posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ) == 0 else { return -1 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1, errno == EINTR {}
    return status
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; Swift's Glibc module does not
/// show it): closes every descriptor from `lowest` up in the child.
private let closeFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
        fatalError("this glibc has no posix_spawn_file_actions_addclosefrom_np (needs 2.34 or later)")
    }
    return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
}()
