extension CordisActor {
    /// Runs `operation` synchronously on `CordisActor`, which the caller must already be on (checked:
    /// a caller elsewhere stops the program). For a nonisolated function told by `#isolation` that its
    /// caller is on the actor.
    static func runAssumingIsolated<T>(_ operation: @CordisActor () -> T) -> T {
        shared.preconditionIsolated()
        return withoutActuallyEscaping(operation) { escapable in
            // The same cast as the standard library's `MainActor.assumeIsolated`, after the same check.
            unsafeBitCast(escapable, to: (() -> T).self)()
        }
    }

    /// Whether `isolation` (a caller's `#isolation`) is this actor.
    static func isCurrent(_ isolation: (any Actor)?) -> Bool {
        guard let isolation else { return false }
        return isolation === shared
    }
}
