import CCordisShim
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Waiting for any process to end, a child of another process included (a node whose test process was
/// killed): the kernel says when, through a pidfd, on a thread of its own.
public enum ProcessExit {
    /// Waits until process `pid` has ended (a zombie not reaped yet has ended), at most `deadline`;
    /// true when it ended (or never existed), false when it still runs at the deadline.
    public static func wait(for pid: pid_t, within deadline: Duration) async -> Bool {
        let milliseconds = Int32(clamping: deadline.components.seconds * 1_000 + deadline.components.attoseconds / 1_000_000_000_000_000)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let thread = Thread {
                let fd = ccordis_pidfd_open(pid)
                guard fd >= 0 else {
                    // ESRCH: no such process (it ended and was reaped). Anything else: cannot tell.
                    continuation.resume(returning: errno == ESRCH)
                    return
                }
                var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                var ready: Int32
                repeat { ready = poll(&entry, 1, max(0, milliseconds)) } while ready < 0 && errno == EINTR
                close(fd)
                continuation.resume(returning: ready > 0)
            }
            thread.name = "process-exit"
            thread.start()
        }
    }
}
