// libFuzzer entry point for the HTTP request parser that the node's /metrics endpoint and the console's
// web server share: the bytes arrive in chunks (the first input byte picks the chunk size), and after each
// chunk the parser sees everything received so far, as those servers call it.
// Built by fuzz/run.sh into one module with Sources/CordisWire/HTTP/HTTPRequest.swift (hence no import).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let chunk = Int(input[0] % 17) + 1
    // The second byte picks the body limit: none (the metrics endpoint) or some (the web console).
    let maxBody = size > 1 && input[1] & 1 == 1 ? 512 : 0
    let stream = Array(input.dropFirst(2))
    var received: [UInt8] = []
    var position = 0
    while position < stream.count {
        let end = min(position + chunk, stream.count)
        received += stream[position ..< end]
        position = end
        switch HTTPRequest.parse(received, maxHeadBytes: 1024, maxBodyBytes: maxBody) {
        case .needMore:
            // A wait is bounded: the caller holds at most the head and the body.
            if received.count > 1024 + maxBody + 4 { fatalError("needMore after \(received.count) bytes") }
        case .request(let request):
            if !request.target.hasPrefix("/") { fatalError("a request whose target is not a path") }
            if request.body.count > maxBody { fatalError("a body of \(request.body.count) bytes over \(maxBody)") }
            _ = request.path
            _ = request.query("token")
            _ = request.header("host")
            return 0
        case .refused(let status, _):
            if ![400, 413, 431, 505].contains(status) { fatalError("refused with \(status)") }
            return 0
        }
    }
    return 0
}
