import CordisProcessTesting
import Foundation
import Synchronization
import Testing

/// The harness reads a child's output to its end of file, also when pipes are opened and closed in
/// quick succession (descriptor numbers are reused at once).
@Suite("PipeDrain")
struct PipeDrainTests {
    /// One pipe's life: drain it, write `text`, close the write end, await the end of file (at most
    /// `deadline`); returns what was read, or nil when the end of file did not come.
    static func cycle(_ text: String, deadline: Duration) async -> String? {
        let pipe = Pipe()
        let state = Mutex<(data: Data, ended: Bool, waiter: CheckedContinuation<Bool, Never>?)>((Data(), false, nil))
        PipeDrain.start(pipe, onData: { chunk in
            state.withLock { $0.data.append(chunk) }
        }, onEnd: {
            let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                state.ended = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: true)
        })
        pipe.fileHandleForWriting.write(Data(text.utf8))
        try? pipe.fileHandleForWriting.close()
        let timer = Task {
            try? await Task.sleep(for: deadline)
            let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: false)
        }
        defer { timer.cancel() }
        let ended = await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.ended { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume(returning: true) }
        }
        guard ended else { return nil }
        return state.withLock { String(decoding: $0.data, as: UTF8.self) }
    }

    @Test("every one of 500 short-lived pipes reports all its data and its end of file")
    func shortLivedPipesEnd() async {
        var missed = 0
        for index in 0 ..< 500 {
            let text = "line \(index)\n"
            let read = await Self.cycle(text, deadline: .seconds(2))
            if read != text { missed += 1 }
            if missed > 0 { break }
        }
        #expect(missed == 0, "a pipe's end of file or data never came")
    }
}
