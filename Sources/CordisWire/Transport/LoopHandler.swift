/// Something registered with an `EventLoop` that reacts to readiness of its file descriptor.
///
/// Both methods run on the loop thread only.
protocol LoopHandler: AnyObject, Sendable {
    /// Reacts to the epoll bits `events`; `scratch` is the loop's read buffer, valid for this call.
    func handle(events: UInt32, scratch: UnsafeMutableRawBufferPointer)
    /// The loop is stopping: release the descriptor.
    func loopStopped()
}

/// Something whose write the loop deferred to the end of its turn (`EventLoop.deferWrite(of:)`).
protocol DeferredWriter: AnyObject, Sendable {
    /// Writes what waits, on the thread driving the loop, before it polls.
    func writeDeferred()
}
