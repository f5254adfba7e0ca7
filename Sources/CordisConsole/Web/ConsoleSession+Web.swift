import CordisWire
import Dispatch
import Foundation
import Synchronization

extension ConsoleSession {
    /// `web`: serves the web console on `listen` (`HOST:PORT`, port 0 picks one) until SIGINT or SIGTERM,
    /// over HTTPS with `certificate` and `key` (PEM files); prints the URL with its access token on stdout.
    ///
    /// - Throws: `ConsoleError` `.usage` for a bad address or a non-loopback one without HTTPS, `.failed`
    ///   when the address cannot be bound or the certificate or key cannot be used.
    func web(listen: String, certificate: String?, key: String?, output: ConsoleOutput) async throws -> Int32 {
        let address: Address
        do {
            address = try Address(parsing: "tcp:" + listen)
        } catch {
            throw ConsoleError(.usage, "--listen takes HOST:PORT (127.0.0.1:8080, [::1]:0), not \"\(listen)\": \(error)")
        }
        guard case .tcp(let host, _) = address else { throw ConsoleError(.usage, "--listen takes HOST:PORT") }
        guard certificate != nil || ConsoleArguments.isLoopback(host) else {
            throw ConsoleError(.usage, "--listen \(listen) is not a loopback address: serving other hosts needs HTTPS (--web-tls-cert, --web-tls-key)")
        }
        var tls: TLSContext?
        if let certificate, let key {
            do throws(TLSError) {
                tls = try TLSContext(serverCertificateFile: certificate, keyFile: key)
            } catch {
                throw ConsoleError(.failed, "--web-tls-cert/--web-tls-key: \(error.message)")
            }
        }
        let token: HTTPAccessToken
        do {
            token = try HTTPAccessToken.random()
        } catch {
            throw ConsoleError(.failed, "cannot make an access token: \(error.message)")
        }
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("cordis-console-web-\(ProcessInfo.processInfo.processIdentifier)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw ConsoleError(.failed, "cannot make the folder \(folder.path) for the graph's layout: \(error)")
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let loop: EventLoop
        do {
            loop = try EventLoop(name: "cordis-console-web")
        } catch {
            throw ConsoleError(.failed, "cannot start the web server's event loop: \(error)")
        }
        let target = WebTarget()
        let server: ByteServer
        do {
            server = try ByteServer(listeningOn: address, loop: loop, limits: WebConsole.limits, tls: tls) { bytes, reply in
                guard let (access, console) = target.current else {
                    reply.send(WebAnswer.text(503, "the console is starting"))
                    return .answering
                }
                return WebConsole.handle(bytes, reply: reply, access: access, console: console)
            }
        } catch {
            await loop.shutdown()
            throw ConsoleError(.failed, "cannot listen on \(listen): \(error)")
        }
        guard case .tcp(_, let port) = server.address else {
            throw ConsoleError(.failed, "the web server is not on TCP")
        }
        let access = WebAccess(token: token, host: host, port: Int(port), secure: tls != nil)
        let console = WebConsole(session: self, access: access, graph: WebGraph(folder: folder))
        do {
            try await console.start()
        } catch {
            server.close()
            await loop.shutdown()
            throw error
        }
        target.set(access, console)
        let shown = host.contains(":") ? "[\(host)]" : host
        let scheme = tls == nil ? "http" : "https"
        output.out("cordis-console web: serving \(self.address) at \(scheme)://\(shown):\(port)/?token=\(token.text)\n")
        output.out("open that URL in a browser (the token is asked for once, then kept in a cookie); Ctrl-C stops\n")
        await Self.untilStopped()
        server.close()
        await console.stop()
        await loop.shutdown()
        return 0
    }

    /// Returns on SIGINT or SIGTERM.
    private static func untilStopped() async {
        let queue = DispatchQueue(label: "cordis-console.web.signals")
        let stop = StopSignal()
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { stop.fire() }
            source.resume()
            sources.append(source)
        }
        await stop.wait()
        for source in sources { source.cancel() }
    }
}

/// A stop request awaited once: `fire` (from a signal handler's queue) resumes the waiter, or the
/// wait that comes later (guarded by its `Mutex`).
final class StopSignal: Sendable {
    private let state = Mutex<(fired: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func fire() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.fired = true
            return state.waiter.take()
        }?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.fired { return true }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// What the web server's handler serves once the console is up (set once, read on the loop thread;
/// guarded by its `Mutex`).
final class WebTarget: Sendable {
    private let state = Mutex<(WebAccess, WebConsole)?>(nil)

    var current: (WebAccess, WebConsole)? { state.withLock { $0 } }

    func set(_ access: WebAccess, _ console: WebConsole) { state.withLock { $0 = (access, console) } }
}

