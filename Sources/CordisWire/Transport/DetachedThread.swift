import CCordisShim
#if canImport(Glibc)
import Glibc
#endif

/// Starts OS threads for the event loop without Foundation's `Thread`: a detached pthread that runs one
/// closure and ends with it.
enum DetachedThread {
    /// Starts a detached thread named `name` (cut to the 15 bytes Linux keeps) that runs `body`.
    ///
    /// - Returns: 0, or the error number `pthread_create` gave (`EAGAIN` when the process or the system
    ///   has run out of threads); `body` then never runs.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Int32 {
        let box = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { argument in
            guard let argument else { return nil }
            let body = Unmanaged<Body>.fromOpaque(argument).takeRetainedValue()
            _ = ccordis_name_thread(body.name)
            body.run()
            return nil
        }, box)
        if result != 0 { Unmanaged<Body>.fromOpaque(box).release() }
        return result
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
