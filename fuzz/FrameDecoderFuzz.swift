// libFuzzer entry point for the pure half of CordisWire: frame splitting, message decoding, the
// encode/decode round trip, authenticated-frame verification and the handshake state machine.
// Built by fuzz/run.sh into one module with the CordisWire codec sources (hence no `import CordisWire`).
import CordisJSON

/// Fixed keys, so MACed frames in the corpus can verify and reach the message decoder.
private let fuzzKeys = SessionKeys(sending: Array(repeating: 7, count: 32), receiving: Array(repeating: 7, count: 32))

private let fuzzIdentity = PeerIdentity(role: .node, name: "fuzz", incarnation: "1")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    // The first byte picks the chunk size, so every way of splitting the stream gets exercised.
    let chunk = Int(input[0] % 17) + 1
    let stream = input.dropFirst()

    var decoder = FrameDecoder(maxFrameSize: 1 << 16)
    var session = SessionCodec(keys: fuzzKeys, maxFrameSize: 1 << 16)
    var handshake = Handshake(
        side: .responder, configuration: HandshakeConfiguration(identity: fuzzIdentity, secrets: nil),
        nonce: Array(repeating: 1, count: 32))
    _ = handshake.start()

    var position = stream.startIndex
    var frames = 0
    while position < stream.endIndex, frames < 64 {
        let end = min(position + chunk, stream.endIndex)
        decoder.feed(stream[position ..< end])
        position = end
        while frames < 64 {
            let frame: Frame?
            do throws(WireError) { frame = try decoder.next() } catch { return 0 }
            guard let frame else { break }
            frames += 1
            checkDirectDecoding(frame)
            checkDocument(frame)
            checkRoundTrip(frame)
            _ = try? session.decode(frame)
            _ = handshake.receive(frame)
        }
    }
    do throws(WireError) { try decoder.finish() } catch { _ = error.description }
    return 0
}

/// The direct decoder of calls and results must give the general decoder's message, or nothing.
private func checkDirectDecoding(_ frame: Frame) {
    frame.payload.withUnsafeBytes { payload in
        guard let direct = HotMessageDecoder.decode(payload, maxDepth: JSONParser.defaultMaxDepth) else { return }
        do throws(WireError) {
            guard try WireMessage(parsing: payload) == direct else { fatalError("direct decoding differs: \(direct)") }
        } catch {
            fatalError("direct decoding accepted what the general decoder refuses (\(error)): \(direct)")
        }
    }
}

/// A `JSONDocument` reads a payload exactly as the parser does (the same value or the same error), and
/// a type decodes from it exactly as from the parsed value (the same value or the same error).
private func checkDocument(_ frame: Frame) {
    frame.payload.withUnsafeBytes { payload in
        let parsed = Result { try JSONParser().parse(payload) }
        let read = Result { try JSONDocument(parsing: payload) }
        switch (parsed, read) {
        case (.success(let value), .success(let document)):
            guard document.value == value else { fatalError("the document's value differs: \(value)") }
            checkDecoding(FuzzReading.self, value, document)
            checkDecoding([String: Double].self, value, document)
            checkDecoding([FuzzReading?].self, value, document)
            checkDecoding(JSONValue.self, value, document)
        case (.failure(let parserError), .failure(let documentError)):
            guard "\(parserError)" == "\(documentError)" else {
                fatalError("different errors: \(parserError) and \(documentError)")
            }
        default:
            fatalError("the parser and the document disagree: \(parsed) and \(read)")
        }
    }
}

private struct FuzzReading: Codable, Equatable {
    var node: String
    var seconds: Double
    var tags: [String: Int]?
}

private func checkDecoding<T: Decodable & Equatable>(_ type: T.Type, _ value: JSONValue, _ document: JSONDocument) {
    let fromValue = Result { try JSONValueDecoder().decode(T.self, from: value) }
    let fromDocument = Result { try JSONValueDecoder().decode(T.self, from: document) }
    switch (fromValue, fromDocument) {
    case (.success(let a), .success(let b)):
        guard a == b else { fatalError("decoded \(T.self) differs: \(a) and \(b)") }
    case (.failure(let a), .failure(let b)):
        guard "\(a)" == "\(b)" else { fatalError("decoding \(T.self) fails differently: \(a) and \(b)") }
    default:
        fatalError("decoding \(T.self) from the value and from the document disagree: \(fromValue) and \(fromDocument)")
    }
}

/// A message that decodes must encode to bytes that decode to the same message.
private func checkRoundTrip(_ frame: Frame) {
    let message: WireMessage
    do throws(WireError) { message = try WireMessage(frame: frame) } catch {
        guard error.offset != nil || error.messageType != nil else { fatalError("error without a place: \(error)") }
        return
    }
    var buffer: [UInt8] = []
    do throws(WireError) { try FrameEncoder(maxFrameSize: 1 << 20).append(message, to: &buffer) } catch {
        fatalError("re-encoding failed: \(error)")
    }
    var again = FrameDecoder(maxFrameSize: 1 << 20)
    again.feed(buffer)
    do throws(WireError) {
        guard let decoded = try again.next(), try WireMessage(frame: decoded) == message else {
            fatalError("round trip changed \(message)")
        }
    } catch {
        fatalError("re-encoded message does not decode: \(error) for \(message)")
    }
}
