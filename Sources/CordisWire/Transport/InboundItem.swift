/// One entry of a connection's bounded inbound queue: a frame's payload, or the message a `Link`
/// decoded from it on the loop thread (held once, decoded once).
package enum InboundItem: Sendable {
    case frame([UInt8])
    case message(WireMessage)
}
