import Foundation

/// Reads one pipe of a child process until its end of file on a thread of its own, handing each chunk
/// to `onData` and then calling `onEnd` once; the pipe's read end is closed after that.
///
/// Plain blocking reads, not `FileHandle.readabilityHandler`: a readability source whose descriptor
/// is closed (and its number reused by the next pipe) before the source is fully cancelled can leave
/// the next pipe's source without events, so its end of file never arrives.
public enum PipeDrain {
    /// Starts draining `pipe` (its read end); the write end is the caller's to close.
    public static func start(_ pipe: Pipe, onData: @escaping @Sendable (Data) -> Void, onEnd: @escaping @Sendable () -> Void) {
        start(reading: pipe.fileHandleForReading, onData: onData, onEnd: onEnd)
    }

    /// Starts draining the pipe end `handle`, closing it at its end of file.
    public static func start(reading handle: FileHandle, onData: @escaping @Sendable (Data) -> Void, onEnd: @escaping @Sendable () -> Void) {
        let fd = handle.fileDescriptor
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    onData(Data(buffer[0 ..< count]))
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            try? handle.close()
            onEnd()
        }
        thread.name = "pipe-drain"
        thread.start()
    }
}
