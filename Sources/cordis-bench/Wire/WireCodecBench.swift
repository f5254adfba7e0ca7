import CordisJSON
import CordisWire
import Foundation

/// Encode and decode throughput of the wire codec (CordisJSON path) against Foundation's
/// `JSONEncoder`/`JSONDecoder` on equivalent `Codable` types, measured in the same run.
///
/// Returns named figures: `<case>.<op>.<codec>.msgs_per_s` and `.MB_per_s` for the cases `call` (a
/// small call message), `result` (the `clock` service's reading) and `result64k` (a result of about
/// 64 KiB), ops `encode` and `decode`, codecs
/// `cordis` and `foundation`; `<case>.<op>.speedup` is cordis over foundation; `call.sealed.*` adds the
/// MAC and sequence number of an authenticated link. Each figure is the best of three timed rounds.
func runWireCodecBenchmark(roundSeconds: Double = 0.25) -> [String: Double] {
    var figures: [String: Double] = [:]

    let call = WireMessage.call(RemoteCall(id: 42, service: "counter", realm: nil, method: "add", args: ["_0": 1]))
    let foundationCall = BenchCall(type: "call", id: 42, service: "counter", realm: nil, method: "add", args: ["_0": 1])
    measureCase("call", message: call, foundation: foundationCall, roundSeconds: roundSeconds, into: &figures)

    let reading = WireMessage.result(RemoteResult(id: 42, value: ["node": "b", "seconds": 1_764_547_200.25]))
    let foundationReading = BenchReadingResult(
        type: "result", id: 42, value: BenchReading(node: "b", seconds: 1_764_547_200.25))
    measureCase("result", message: reading, foundation: foundationReading, roundSeconds: roundSeconds, into: &figures)

    var items: [JSONValue] = []
    var foundationItems: [BenchItem] = []
    var size = 0
    var index = 0
    while size < 64 * 1024 - 80 {
        let name = "item-\(index)"
        items.append(["id": .integer(index), "name": .string(name), "enabled": true, "weight": 1.5])
        foundationItems.append(BenchItem(id: index, name: name, enabled: true, weight: 1.5))
        size += 50 + name.utf8.count
        index += 1
    }
    let big = WireMessage.result(RemoteResult(id: 7, value: ["items": .array(items)]))
    let foundationBig = BenchResult(type: "result", id: 7, value: BenchItems(items: foundationItems))
    measureCase("result64k", message: big, foundation: foundationBig, roundSeconds: roundSeconds, into: &figures)

    measureSealed(call, roundSeconds: roundSeconds, into: &figures)
    measureCodable(roundSeconds: roundSeconds, into: &figures)
    return figures
}

/// `Codable` values to and from `JSONValue` (what a remote call's arguments and result go through, on
/// both nodes): `codable.reading` is a struct of a string and a double (the `clock` service's
/// reading), `codable.items100` an object holding 100 records of four fields. From JSON text, the two
/// ways a value's bytes can be decoded: parsed into a `JSONValue` tree and decoded from it
/// (`decode_text`), and read into a `JSONDocument` and decoded from its flat form (`decode_document`,
/// what a calling node does with a call's result).
private func measureCodable(roundSeconds: Double, into figures: inout [String: Double]) {
    let encoder = JSONValueEncoder()
    let decoder = JSONValueDecoder()
    func measure<T: Codable & Equatable>(_ name: String, _ value: T) {
        guard let encoded = try? encoder.encode(value) else {
            figures["codable.\(name).encode.failures"] = 1
            return
        }
        figures["codable.\(name).encode.per_s"] = rate(roundSeconds) {
            if (try? encoder.encode(value)) == nil { figures["codable.\(name).encode.failures", default: 0] += 1 }
        }
        figures["codable.\(name).decode.per_s"] = rate(roundSeconds) {
            if (try? decoder.decode(T.self, from: encoded)) != value {
                figures["codable.\(name).decode.failures", default: 0] += 1
            }
        }
        let text = encoded.serialized()
        figures["codable.\(name).decode_text.per_s"] = rate(roundSeconds) {
            let decoded = text.withUnsafeBytes { bytes in
                (try? JSONParser().parse(bytes)).flatMap { try? decoder.decode(T.self, from: $0) }
            }
            if decoded != value { figures["codable.\(name).decode_text.failures", default: 0] += 1 }
        }
        figures["codable.\(name).decode_document.per_s"] = rate(roundSeconds) {
            let decoded = text.withUnsafeBytes { bytes in
                (try? JSONDocument(parsing: bytes)).flatMap { try? decoder.decode(T.self, from: $0) }
            }
            if decoded != value { figures["codable.\(name).decode_document.failures", default: 0] += 1 }
        }
    }
    measure("reading", BenchReading(node: "b", seconds: 1_764_547_200.25))
    measure("items100", BenchItems(items: (0..<100).map { BenchItem(id: $0, name: "item-\($0)", enabled: $0 % 2 == 0, weight: 1.5) }))
}

private struct BenchReading: Codable, Equatable {
    var node: String
    var seconds: Double
}

private func measureCase<F: Codable & Equatable>(
    _ name: String, message: WireMessage, foundation value: F, roundSeconds: Double, into figures: inout [String: Double]
) {
    let encoder = FrameEncoder()
    var buffer: [UInt8] = []
    buffer.reserveCapacity(128 * 1024)
    try? encoder.append(message, to: &buffer)
    let frame = Frame(payload: Array(buffer.dropFirst(Frame.headerSize)))
    let bytes = Double(frame.payload.count)
    figures["\(name).bytes"] = bytes

    let cordisEncode = rate(roundSeconds) {
        buffer.removeAll(keepingCapacity: true)
        try? encoder.append(message, to: &buffer)
    }
    let cordisDecode = rate(roundSeconds) {
        if (try? WireMessage(frame: frame)) == nil { figures["\(name).decode.failures", default: 0] += 1 }
    }
    let jsonEncoder = JSONEncoder()
    let jsonDecoder = JSONDecoder()
    let foundationBytes = (try? jsonEncoder.encode(value)) ?? Data()
    figures["\(name).foundation.bytes"] = Double(foundationBytes.count)
    let foundationEncode = rate(roundSeconds) {
        var data = (try? jsonEncoder.encode(value)) ?? Data()
        // Frame it too, as the wire would.
        var length = UInt32(data.count).bigEndian
        data.insert(contentsOf: Data(bytes: &length, count: 4), at: 0)
    }
    let foundationDecode = rate(roundSeconds) {
        if (try? jsonDecoder.decode(F.self, from: foundationBytes)) != value {
            figures["\(name).foundation.decode.failures", default: 0] += 1
        }
    }
    for (op, cordis, base) in [("encode", cordisEncode, foundationEncode), ("decode", cordisDecode, foundationDecode)] {
        figures["\(name).\(op).cordis.msgs_per_s"] = cordis
        figures["\(name).\(op).cordis.MB_per_s"] = cordis * bytes / 1_000_000
        figures["\(name).\(op).foundation.msgs_per_s"] = base
        figures["\(name).\(op).foundation.MB_per_s"] = base * Double(foundationBytes.count) / 1_000_000
        figures["\(name).\(op).speedup"] = cordis / base
    }
}

private func measureSealed(_ message: WireMessage, roundSeconds: Double, into figures: inout [String: Double]) {
    // Keys as a handshake would make them, from two in-process handshakes.
    guard let secret = try? ClusterSecret(bytes: Array("benchmark-secret-0123456789abcdef".utf8)) else { return }
    let secrets = ClusterSecrets(proving: secret)
    let a = PeerIdentity(role: .node, name: "a", incarnation: "1")
    let b = PeerIdentity(role: .node, name: "b", incarnation: "1")
    guard var initiator = try? Handshake(side: .initiator, configuration: HandshakeConfiguration(identity: a, secrets: secrets)),
          var responder = try? Handshake(side: .responder, configuration: HandshakeConfiguration(identity: b, secrets: secrets))
    else { return }
    var toResponder = initiator.start()
    var sending: SessionCodec?
    var receiving: SessionCodec?
    for _ in 0 ..< 4 {
        var toInitiator: [WireMessage] = []
        for message in toResponder {
            let step = responder.receive(message)
            toInitiator += step.messages
            if case .established(_, let result) = step { receiving = result.sessionCodec() }
        }
        toResponder = []
        for message in toInitiator {
            let step = initiator.receive(message)
            toResponder += step.messages
            if case .established(_, let result) = step { sending = result.sessionCodec() }
        }
    }
    guard var sender = sending, let receiver = receiving else { return }
    var buffer: [UInt8] = []
    buffer.reserveCapacity(1024)
    let encode = rate(roundSeconds) {
        buffer.removeAll(keepingCapacity: true)
        try? sender.append(message, to: &buffer)
    }
    // Decoding needs frames in sequence: pre-seal a batch and verify them in order.
    var batchSender = sending ?? sender  // a fresh sender: its frames start at sequence 0
    var frames: [Frame] = []
    var stream: [UInt8] = []
    for _ in 0 ..< 20000 { try? batchSender.append(message, to: &stream) }
    var decoder = FrameDecoder()
    decoder.feed(stream)
    while let frame = try? decoder.next() { frames.append(frame) }
    var best = 0.0
    for _ in 0 ..< 3 {
        var opener = receiver
        let start = DispatchTime.now().uptimeNanoseconds
        for frame in frames { _ = try? opener.decode(frame) }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        best = max(best, Double(frames.count) / seconds)
    }
    figures["call.sealed.encode.cordis.msgs_per_s"] = encode
    figures["call.sealed.decode.cordis.msgs_per_s"] = best
    figures["call.sealed.bytes"] = Double(frames.first?.payload.count ?? 0)
}

/// Operations per second of `body`: the best of three rounds of about `seconds` each.
private func rate(_ seconds: Double, _ body: () -> Void) -> Double {
    var batch = 1
    // Calibrate a batch that takes about a millisecond.
    while true {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0 ..< batch { body() }
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        if elapsed > 1_000_000 || batch >= 1 << 24 { break }
        batch *= 2
    }
    var best = 0.0
    for _ in 0 ..< 3 {
        var count = 0
        let start = DispatchTime.now().uptimeNanoseconds
        var elapsed: UInt64 = 0
        while Double(elapsed) < seconds * 1e9 {
            for _ in 0 ..< batch { body() }
            count += batch
            elapsed = DispatchTime.now().uptimeNanoseconds - start
        }
        best = max(best, Double(count) / (Double(elapsed) / 1e9))
    }
    return best
}

private struct BenchCall: Codable, Equatable {
    var type: String
    var id: Int
    var service: String
    var realm: String?
    var method: String
    var args: [String: Int]
}

private struct BenchItem: Codable, Equatable {
    var id: Int
    var name: String
    var enabled: Bool
    var weight: Double
}

private struct BenchItems: Codable, Equatable {
    var items: [BenchItem]
}

private struct BenchReadingResult: Codable, Equatable {
    var type: String
    var id: Int
    var value: BenchReading
}

private struct BenchResult: Codable, Equatable {
    var type: String
    var id: Int
    var value: BenchItems
}
