import CCordisShim

#if canImport(Glibc)
import Glibc
#endif

/// A node started by a test kit dies with the process that started it: when `CORDIS_EXIT_WITH_PARENT`
/// names a process id (CordisTestKit sets it), the kernel is asked to kill this node (SIGKILL, which
/// also ends a node stopped by SIGSTOP) once its parent ends, and a node whose parent is already gone
/// ends at once. So a test process killed with SIGKILL leaves no node behind. Without the variable
/// nothing changes.
enum ParentWatch {
    /// The variable's name.
    static let variable = "CORDIS_EXIT_WITH_PARENT"

    /// Applies the variable, if set; returns false when the named parent is already gone (the node
    /// should exit). A value that is not a process id is ignored. (Read with `getenv`: a node maps no
    /// Foundation beyond FoundationEssentials.)
    static func apply() -> Bool {
        guard let raw = getenv(variable), let parent = Int32(String(cString: raw)), parent > 1 else { return true }
        return ccordis_die_with_parent(parent) != 1
    }
}
