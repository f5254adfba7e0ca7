/// The bytes of one HTTP/1.1 answer as the node's `/metrics` endpoint and the console's web server
/// send them: a status line, `Content-Type`, `Content-Length`, the extra headers, `Connection: close`
/// (one request per connection), and the body.
package enum HTTPResponse {
    /// The reason phrase of `status`.
    package static func reason(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 204: return "No Content"
        case 302: return "Found"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 413: return "Content Too Large"
        case 415: return "Unsupported Media Type"
        case 422: return "Unprocessable Content"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Error"
        }
    }

    /// The bytes of an answer with `body`; with `headOnly` the body is left out (its length is still sent).
    package static func bytes(
        status: Int, body: [UInt8], contentType: String = "text/plain; charset=utf-8", extraHeaders: [String] = [],
        headOnly: Bool = false
    ) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(reason(status))\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n"
        for header in extraHeaders { head += header + "\r\n" }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + (headOnly ? [] : body)
    }

    /// The bytes of an answer with the text `body` (see `bytes(status:body:contentType:extraHeaders:headOnly:)`).
    package static func text(
        status: Int, _ body: String, contentType: String = "text/plain; charset=utf-8", extraHeaders: [String] = [],
        headOnly: Bool = false
    ) -> [UInt8] {
        bytes(status: status, body: Array(body.utf8), contentType: contentType, extraHeaders: extraHeaders, headOnly: headOnly)
    }
}
