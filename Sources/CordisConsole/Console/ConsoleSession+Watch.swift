import CordisJSON
import CordisControl
import CordisWire
import Dispatch
import Foundation

/// What wakes the watch view. Everything that comes from a link carries the number of that link, so
/// what an earlier link still delivers after a reconnection is ignored.
enum WatchInput: Sendable {
    case key(UInt8)
    case resize
    case stop
    /// A second passed (the reconnection countdown).
    case tick
    case event(ControlEvent, link: Int)
    case status(ClusterStatus, link: Int)
    case failure(String, link: Int)
    /// The link ended, and why.
    case linkClosed(String, link: Int)
    /// A new link is up (to `address`), following the cluster's events.
    case connected(ControlClient, address: String)
    /// A reconnection to `address` failed, and why.
    case connectFailed(address: String, reason: String)
}

extension ConsoleSession {
    /// The longest wait between two reconnection attempts.
    static let longestReconnectDelay: Duration = .seconds(5)

    /// `watch`: follows the cluster's events (starting from the recent ones each node keeps), refetches
    /// the status after changes, and redraws in place until `q`, Ctrl-C, SIGINT or SIGTERM; the terminal
    /// is restored on every way out. When the link to the node goes, the view says why and reconnects,
    /// with a countdown, to the same address or to another member it saw, until one answers.
    func watch(output: ConsoleOutput) async throws -> Int32 {
        let terminal = Terminal()
        try terminal.enter()
        defer { terminal.restore() }
        let style = TextStyle(colored: true)
        let (inputs, sink) = AsyncStream.makeStream(of: WatchInput.self, bufferingPolicy: .unbounded)
        let sources = Self.inputSources(terminal: terminal, sink: sink)
        defer { for source in sources { source.cancel() } }

        var screen = WatchScreen()
        var client = self.client
        var address = self.address
        var link = 0
        var follower: Task<Void, Never>?
        defer { follower?.cancel() }
        func follow(_ client: ControlClient, link: Int) {
            follower?.cancel()
            follower = Task {
                for await event in client.events { sink.yield(.event(event, link: link)) }
                sink.yield(.linkClosed(await client.closeReason ?? "the link closed", link: link))
            }
        }
        follow(client, link: link)
        // What was shown: a reconnection shows only the history's events that came after it.
        var resume = EventResume()
        let history = try await subscribe(via: client, history: true)
        for record in resume.unseen(history) { screen.record(EventText.line(record)) }

        var fetching = false
        var stale = true
        var fetchedAt = ContinuousClock.now
        func fetch() {
            guard !fetching else {
                stale = true
                return
            }
            fetching = true
            stale = false
            let (current, number) = (client, link)
            Task {
                do {
                    sink.yield(.status(try await self.clusterStatus(via: current), link: number))
                } catch {
                    sink.yield(.failure("\(error)", link: number))
                }
            }
        }
        func redraw() {
            let size = terminal.size
            terminal.draw(screen.lines(width: size.width, height: size.height, style: style))
        }

        // Reconnection: the rule (the addresses to try in turn, the wait) and the next attempt's time.
        var reconnection: Reconnection?
        var attemptAt: ContinuousClock.Instant?
        var connecting = false
        func showCountdown() {
            guard let attemptAt, let reconnection else { return }
            let left = max(0, Int(((attemptAt - .now) / .seconds(1)).rounded(.up)))
            screen.reconnecting = connecting
                ? "connecting to \(reconnection.target)…"
                : "reconnecting to \(reconnection.target) in \(left) s"
        }
        func attempt() {
            guard !connecting, let reconnection else { return }
            connecting = true
            let target = reconnection.target
            Task {
                do {
                    let parsed = try Address(parsing: target)
                    sink.yield(.connected(try await self.connector(parsed), address: target))
                } catch {
                    let reason = Self.connectFailure(error, node: target, timeout: Double(self.timeout.components.seconds)).message
                    sink.yield(.connectFailed(address: target, reason: reason))
                }
            }
        }

        fetch()
        redraw()
        for await input in inputs {
            switch input {
            case .key(let byte):
                if byte == UInt8(ascii: "q") || byte == UInt8(ascii: "Q") || byte == 3 { return 0 }
                if byte == UInt8(ascii: "r"), attemptAt == nil { fetch() }
            case .stop:
                return 0
            case .resize:
                redraw()
            case .tick:
                // An unreachable member's last seen keeps counting between fetches.
                screen.sinceFetch = ControlTimeout.seconds(.now - fetchedAt)
                if let due = attemptAt {
                    if !connecting, ContinuousClock.now >= due { attempt() }
                    showCountdown()
                } else if screen.status?.nodes.allSatisfy(\.reachable) ?? true {
                    continue
                }
                redraw()
            case .event(let event, let number):
                guard number == link else { continue }
                resume.saw(EventRecord(event))
                screen.record(EventText.line(EventRecord(event)))
                // The node ended the subscription because this console fell behind: follow again from now.
                if event.kind == "lagged" {
                    let current = client
                    Task { _ = try? await self.subscribe(via: current, history: false) }
                }
                fetch()
                redraw()
            case .status(let status, let number):
                guard number == link else { continue }
                fetching = false
                screen.status = status
                fetchedAt = .now
                screen.sinceFetch = 0
                screen.problem = nil
                if stale { fetch() }
                redraw()
            case .failure(let message, let number):
                guard number == link else { continue }
                fetching = false
                screen.problem = message
                redraw()
            case .linkClosed(let reason, let number):
                guard number == link, attemptAt == nil else { continue }
                fetching = false
                screen.problem = "lost the link to \(address): \(reason)"
                // The same address first, then every other address a member was seen with.
                let rule = Reconnection(lost: address, seen: (screen.status?.nodes ?? []).flatMap(\.addresses))
                reconnection = rule
                attemptAt = .now + rule.delay
                showCountdown()
                redraw()
            case .connected(let newClient, let target):
                connecting = false
                guard attemptAt != nil else {
                    await newClient.close()
                    continue
                }
                let old = client
                Task { await old.close() }
                link += 1
                client = newClient
                address = target
                attemptAt = nil
                screen.reconnecting = nil
                screen.problem = nil
                follow(newClient, link: link)
                do {
                    // The history gives what happened while the link was down, and nothing shown already.
                    let history = try await subscribe(via: newClient, history: true)
                    screen.record("\(EventText.timestamp(Date().timeIntervalSince1970)) connected to \(target)\n")
                    for record in resume.unseen(history) { screen.record(EventText.line(record)) }
                } catch {
                    screen.problem = "\(target) did not take the subscription: \(error)"
                }
                fetch()
                redraw()
            case .connectFailed(_, let reason):
                connecting = false
                guard attemptAt != nil else { continue }
                screen.problem = reason
                reconnection?.failed()
                attemptAt = .now + (reconnection?.delay ?? .seconds(1))
                showCountdown()
                redraw()
            }
        }
        return 0
    }

    /// Subscribes to the cluster's events on `client`; returns the recent ones when `history`.
    private func subscribe(via client: ControlClient, history: Bool) async throws -> [EventRecord] {
        let result = try await request(.subscribe, args: ["follow": true, "history": .bool(history), "cluster": true], via: client)
        return try decode([EventRecord].self, from: result["events"] ?? .array([]), as: "event history")
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
        let ticks = DispatchSource.makeTimerSource(queue: queue)
        ticks.schedule(deadline: .now() + 1, repeating: 1)
        ticks.setEventHandler { sink.yield(.tick) }
        ticks.resume()
        sources.append(ticks)
        return sources
    }
}
