import CCordisShim
import CordisWire
import Synchronization

/// Gives the memory a departed console used back to the system: a second after a console's link ends
/// (at most once a second, however many end), the node's loop asks the C library to release the free
/// pages of its heap. Without it, the buffers of a console that read slowly (up to the bounds
/// `Admission` sets) stay in the process's resident memory after it left.
enum HeapTrim {
    private static let scheduled = Atomic<Bool>(false)

    /// Schedules a trim on `loop`, unless one is already due.
    static func soon(on loop: EventLoop) {
        guard scheduled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        _ = loop.schedule(after: .seconds(1)) {
            scheduled.store(false, ordering: .relaxed)
            _ = ccordis_trim_heap()
        }
    }
}
