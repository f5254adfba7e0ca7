import Cordis
import CordisWire

/// `--metrics-listen`: an HTTP/1.1 endpoint on the node's event loop that serves `GET /metrics` (and
/// `HEAD`) in the Prometheus text format 0.0.4, and nothing else, without authentication.
///
/// Every request is bounded (`ByteServer.Limits`: 64 connections, a 16 KiB request, 10 s from accept
/// to the end of the answer); a head that does not parse gets a 4xx (`HTTPRequest`), another path
/// 404, another method 405. The figures are read on `CordisActor` for each scrape.
public final class MetricsEndpoint: Sendable {
    private let server: ByteServer

    /// The address bound (with the real port when port 0 was asked for).
    public var address: Address { server.address }

    /// `http://HOST:PORT/metrics` (an IPv6 host in brackets).
    public var url: String {
        guard case .tcp(let host, let port) = address else { return "\(address)" }
        let shown = host.contains(":") ? "[\(host)]" : host
        return "http://\(shown):\(port)/metrics"
    }

    /// Starts serving `node`'s metrics on the TCP `address`, on the node's event loop.
    ///
    /// - Throws: `TransportError` (`addressInUse`, `addressUnavailable`, `invalidAddress`).
    @CordisActor
    init(node: Node, address: Address, limits: ByteServer.Limits = ByteServer.Limits()) throws {
        server = try ByteServer(listeningOn: address, loop: node.loop, limits: limits) { [weak node] bytes, reply in
            switch HTTPRequest.parse(bytes) {
            case .needMore:
                return .needMore
            case .refused(let status, let reason):
                reply.send(MetricsHTTP.response(status: status, body: reason + "\n"))
            case .request(let head):
                guard head.method == "GET" || head.method == "HEAD" else {
                    reply.send(MetricsHTTP.response(
                        status: 405, body: "only GET and HEAD are served\n", extraHeaders: ["Allow: GET, HEAD"]))
                    return .answering
                }
                guard head.path == "/metrics" else {
                    reply.send(MetricsHTTP.response(status: 404, body: "only /metrics is served\n"))
                    return .answering
                }
                let headOnly = head.method == "HEAD"
                Task { @CordisActor in
                    guard let node else {
                        reply.send(MetricsHTTP.response(status: 503, body: "the node is stopping\n"))
                        return
                    }
                    reply.send(MetricsHTTP.response(
                        status: 200, body: node.metricsText(), contentType: MetricsHTTP.exposition, headOnly: headOnly))
                }
            }
            return .answering
        }
    }

    /// Stops listening. Idempotent.
    public func close() {
        server.close()
    }
}

/// The metrics endpoint's HTTP answers (`HTTPResponse`, shared with the console's web server).
enum MetricsHTTP {
    /// The content type of the Prometheus text format 0.0.4.
    static let exposition = "text/plain; version=0.0.4; charset=utf-8"

    /// The bytes of an answer; with `headOnly` the body is left out (its length is still sent).
    static func response(
        status: Int, body: String, contentType: String = "text/plain; charset=utf-8", extraHeaders: [String] = [],
        headOnly: Bool = false
    ) -> [UInt8] {
        HTTPResponse.text(status: status, body, contentType: contentType, extraHeaders: extraHeaders, headOnly: headOnly)
    }
}
