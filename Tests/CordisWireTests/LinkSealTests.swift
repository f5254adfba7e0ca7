import Testing
@testable import CordisWire

/// A link's sending half, tested with messages in and sealed frames out, opened by the peer's session:
/// no socket, no loop.
@Suite("The link's seal")
struct LinkSealTests {
    /// Opens every frame in `framed` with the peer's session, in order.
    private static func open(_ framed: [UInt8], with peer: inout SessionCodec) throws -> [WireMessage] {
        var decoder = FrameDecoder()
        decoder.feed(framed)
        var messages: [WireMessage] = []
        while let frame = try decoder.next() { messages.append(try peer.decode(frame)) }
        return messages
    }

    private static let event = ControlEvent(id: 0, node: "a", time: 1, kind: "status", detail: ["fiber": 7])

    /// The event as subscription `id` receives it.
    private static func event(_ id: Int) -> WireMessage {
        var copy = event
        copy.id = id
        return .event(copy)
    }

    @Test("seals nothing before a session, then every message in order for the peer to open, and nothing after the last")
    func sealsInOrder() throws {
        let (mine, responder) = try SessionCodecTests().authenticatedPair()
        var peer = responder
        var seal = LinkSeal()
        #expect(try seal.seal(.ping(id: 0), limit: 1 << 20) == nil)
        #expect(seal.session == nil)

        seal.establish(mine)
        let first = try #require(try seal.seal(.ping(id: 1), limit: 1 << 20))
        let shared = try #require(try seal.seal(SharedEvent(Self.event), ids: [4, 9], limit: 1 << 20))
        let last = try #require(try seal.seal(.goodbye(reason: "done"), last: true, limit: 1 << 20))
        // Opened in the order sealed: each frame carries the next sequence number.
        #expect(try Self.open(first + shared + last, with: &peer) == [.ping(id: 1), Self.event(4), Self.event(9), .goodbye(reason: "done")])
        #expect(seal.session == nil)
        #expect(try seal.seal(.ping(id: 5), limit: 1 << 20) == nil)
    }

    @Test("a send over the frame limit or the outbound limit spends no sequence number: the next one opens")
    func failedSealSpendsNothing() throws {
        var (mine, peer) = try SessionCodecTests().authenticatedPair()
        // A frame limit an event's copy fits in (with its 4-byte header to spare) and a long goodbye does not.
        var probe = mine
        var eventFrame: [UInt8] = []
        try probe.append(SharedEvent(Self.event), id: 1, to: &eventFrame)
        mine.encoder.maxFrameSize = eventFrame.count
        var seal = LinkSeal()
        seal.establish(mine)
        let first = try #require(try seal.seal(.ping(id: 1), limit: 1 << 20))

        var refusals: [TransportError] = []
        do {
            _ = try seal.seal(.goodbye(reason: String(repeating: "x", count: eventFrame.count)), limit: 1 << 20)
        } catch { refusals.append(error) }
        // Each copy fits the frame limit; together they are over the outbound limit: none goes.
        do {
            _ = try seal.seal(SharedEvent(Self.event), ids: [1, 2, 3], limit: first.count + 10)
        } catch { refusals.append(error) }
        // The last message refused: the session stays.
        do {
            _ = try seal.seal(.ping(id: 2), last: true, limit: first.count - 1)
        } catch { refusals.append(error) }
        #expect(refusals.map(\.code) == [.tooLarge, .tooLarge, .tooLarge])
        #expect(refusals.first?.message.hasPrefix("cannot send goodbye: ") == true)
        #expect(refusals.dropFirst().first?.message.hasSuffix("more than the outbound limit of \(first.count + 10) bytes") == true)
        #expect(refusals.last?.message == "\(first.count) bytes are more than the outbound limit of \(first.count - 1) bytes")
        #expect(seal.session != nil)
        let next = try #require(try seal.seal(.ping(id: 5), limit: 1 << 20))
        #expect(try Self.open(first + next, with: &peer) == [.ping(id: 1), .ping(id: 5)])
    }
}
