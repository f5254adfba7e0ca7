import CCordisShim
#if canImport(Glibc)
import Glibc
#endif

/// Starts OS threads for the event loop without Foundation's `Thread`: a joinable pthread that runs one
/// closure and ends with it. The loop joins its threads when it shuts down, so no thread of it is still
/// running its thread-exit work (thread-local destructors, OpenSSL's per-thread state) when the caller
/// goes on, and possibly exits the process.
enum LoopThread {
    /// Starts a thread named `name` (cut to the 15 bytes Linux keeps) that runs `body`.
    ///
    /// - Returns: the thread, or the error number `pthread_create` gave (`EAGAIN` when the process or
    ///   the system has run out of threads); `body` then never runs.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Result<pthread_t, Errno> {
        let box = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let body = Unmanaged<Body>.fromOpaque(argument).takeRetainedValue()
            _ = ccordis_name_thread(body.name)
            body.run()
            return nil
        }, box)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            return .failure(Errno(number: result))
        }
        return .success(thread)
    }

    /// Waits until `thread` has ended, for at most `milliseconds`; a thread still running then is
    /// detached (it ends on its own) and false is returned.
    static func join(_ thread: pthread_t, withinMilliseconds milliseconds: Int) -> Bool {
        if ccordis_join_thread(thread, Int32(clamping: milliseconds)) == 0 { return true }
        pthread_detach(thread)
        return false
    }

    /// An error number of `pthread_create`.
    struct Errno: Error {
        var number: Int32
    }

    private final class Body: Sendable {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }
}
