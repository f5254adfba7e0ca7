// libFuzzer entry point for the handshake state machine (CordisWire/Auth), both sides, with and
// without a cluster secret. The input is a header byte, an index byte and a stream of frames.
//
// Header bit 0: this side is the initiator (else the responder); bit 1: both sides share a secret;
// bit 2: an honest counterpart runs the exchange and the message at the index is replaced by the first
// fuzzed frame (else every fuzzed frame goes straight to this side). Checked: no exchange with a secret
// is ever established on a forged message, nothing is established twice, nothing traps.
// Built by fuzz/run.sh into one module with the CordisWire codec sources (hence no `import CordisWire`).
import CordisJSON

private let secrets = try! ClusterSecrets(proving: ClusterSecret(bytes: Array("a-cluster-secret-of-at-least-32-bytes!".utf8)))

private func configuration(_ name: String, secret: Bool) -> HandshakeConfiguration {
    HandshakeConfiguration(
        identity: PeerIdentity(role: .node, name: name, incarnation: "\(name)-1"), secrets: secret ? secrets : nil)
}

/// The frames in `bytes` (at most 16, 64 KiB each), decoded as a link would.
private func frames(_ bytes: ArraySlice<UInt8>) -> [Frame] {
    var decoder = FrameDecoder(maxFrameSize: 1 << 16)
    decoder.feed(bytes)
    var result: [Frame] = []
    while result.count < 16 {
        let frame: Frame?
        do throws(WireError) { frame = try decoder.next() } catch { break }
        guard let frame else { break }
        result.append(frame)
    }
    return result
}

/// Counts establishments of one side; a second one is a defect.
private struct Outcome {
    var established = 0
    var over = false

    mutating func record(_ step: HandshakeStep) {
        switch step {
        case .established:
            established += 1
            over = true
            if established > 1 { fatalError("a handshake was established twice") }
        case .failed:
            over = true
        case .proceed:
            break
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size >= 2 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let initiator = input[0] & 1 != 0
    let secret = input[0] & 2 != 0
    let honest = input[0] & 4 != 0
    let replaceAt = Int(input[1] % 6)
    let fuzzed = frames(input[2...])

    var me = Handshake(
        side: initiator ? .initiator : .responder, configuration: configuration("me", secret: secret),
        nonce: Array(repeating: 1, count: 32))
    var mine = Outcome()
    let opening = me.start()

    guard honest else {
        for frame in fuzzed where !mine.over {
            mine.record(me.receive(frame))
        }
        // Fuzzed frames never know the secret's proof: with a secret nothing can be established.
        if secret, mine.established > 0 { fatalError("established with a secret on fuzzed frames alone") }
        return 0
    }

    // An honest counterpart; the message it sends at `replaceAt` is swapped for the first fuzzed frame.
    var peer = Handshake(
        side: initiator ? .responder : .initiator, configuration: configuration("peer", secret: secret),
        nonce: Array(repeating: 2, count: 32))
    var theirs = Outcome()
    var toMe: [WireMessage] = initiator ? [] : peer.start()
    var toPeer: [WireMessage] = opening
    if initiator { _ = peer.start() }
    var sent = 0
    var forged = false
    var rounds = 0
    while rounds < 16, !(toMe.isEmpty && toPeer.isEmpty) {
        rounds += 1
        for message in toPeer where !theirs.over {
            let step = peer.receive(message)
            theirs.record(step)
            toMe.append(contentsOf: step.messages)
        }
        toPeer.removeAll()
        let batch = toMe
        toMe.removeAll()
        for message in batch where !mine.over {
            let step: HandshakeStep
            if sent == replaceAt, let replacement = fuzzed.first {
                // A replacement that decodes to the honest message is no forgery.
                let same = (try? WireMessage(frame: replacement)) == message
                forged = forged || !same
                step = me.receive(replacement)
            } else {
                step = me.receive(message)
            }
            sent += 1
            mine.record(step)
            toPeer.append(contentsOf: step.messages)
        }
    }
    if secret, forged, mine.established > 0 {
        // The proof covers the whole transcript, so a changed message cannot be accepted.
        fatalError("established with a secret after a forged message")
    }
    return 0
}
