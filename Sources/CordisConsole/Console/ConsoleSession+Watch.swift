import CordisJSON
import CordisControl
import CordisWire
import Dispatch
import Foundation

/// What wakes the watch view.
enum WatchInput: Sendable {
    case key(UInt8)
    case resize
    case stop
    case event(ControlEvent)
    case status(ClusterStatus)
    case failure(String)
    case linkClosed
}

extension ConsoleSession {
    /// `watch`: follows the cluster's events, refetches the status after changes, and redraws in place
    /// until `q`, Ctrl-C, SIGINT or SIGTERM; the terminal is restored on every way out.
    func watch(output: ConsoleOutput) async throws -> Int32 {
        let terminal = Terminal()
        try terminal.enter()
        defer { terminal.restore() }
        let style = TextStyle(colored: true)
        let (inputs, sink) = AsyncStream.makeStream(of: WatchInput.self, bufferingPolicy: .unbounded)
        let sources = Self.inputSources(terminal: terminal, sink: sink)
        defer { for source in sources { source.cancel() } }
        let client = self.client
        let follower = Task {
            for await event in client.events { sink.yield(.event(event)) }
            sink.yield(.linkClosed)
        }
        defer { follower.cancel() }
        _ = try await request("subscribe", args: ["follow": true, "history": false, "cluster": true])

        var screen = WatchScreen()
        var fetching = false
        var stale = true
        func fetch() {
            guard !fetching else {
                stale = true
                return
            }
            fetching = true
            stale = false
            Task {
                do {
                    sink.yield(.status(try await self.clusterStatus()))
                } catch {
                    sink.yield(.failure("\(error)"))
                }
            }
        }
        func redraw() {
            let size = terminal.size
            terminal.draw(screen.lines(width: size.width, height: size.height, style: style))
        }
        fetch()
        redraw()
        for await input in inputs {
            switch input {
            case .key(let byte):
                if byte == UInt8(ascii: "q") || byte == UInt8(ascii: "Q") || byte == 3 { return 0 }
                if byte == UInt8(ascii: "r") { fetch() }
            case .stop:
                return 0
            case .resize:
                redraw()
            case .event(let event):
                screen.record(EventText.line(EventRecord(event)).trimmingCharacters(in: .newlines))
                fetch()
                redraw()
            case .status(let status):
                fetching = false
                screen.status = status
                screen.problem = nil
                if stale { fetch() }
                redraw()
            case .failure(let message):
                fetching = false
                screen.problem = message
                redraw()
            case .linkClosed:
                screen.problem = "the link to \(address) closed"
                redraw()
                return 69
            }
        }
        return 0
    }

    private static func inputSources(terminal: Terminal, sink: AsyncStream<WatchInput>.Continuation) -> [any DispatchSourceProtocol] {
        let queue = DispatchQueue(label: "cordis-console.watch")
        let keys = DispatchSource.makeReadSource(fileDescriptor: terminal.input, queue: queue)
        keys.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { read(terminal.input, $0.baseAddress, $0.count) }
            if count <= 0 {
                sink.yield(.stop)
                return
            }
            for byte in buffer.prefix(count) { sink.yield(.key(byte)) }
        }
        keys.resume()
        var sources: [any DispatchSourceProtocol] = [keys]
        for (number, input) in [(SIGWINCH, WatchInput.resize), (SIGINT, .stop), (SIGTERM, .stop), (SIGHUP, .stop)] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { sink.yield(input) }
            source.resume()
            sources.append(source)
        }
        return sources
    }
}
