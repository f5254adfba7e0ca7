import CordisWire
import Testing

@Suite("Address")
struct TransportAddressTests {
    @Test("Each address form parses and prints back the same text", arguments: [
        "unix:/run/cordis/a.sock", "tcp:127.0.0.1:7000", "tcp:localhost:0", "tcp:[::1]:65535", "tcp:[fe80::1]:80",
        "tcp:node-b.example:7000",
    ])
    func addressRoundTrips(text: String) throws {
        let address = try Address(parsing: text)
        #expect(address.description == text)
    }

    @Test("Parsed addresses carry their parts")
    func parsedAddressesCarryTheirParts() throws {
        #expect(try Address(parsing: "unix:/tmp/x.sock") == .unix(path: "/tmp/x.sock"))
        #expect(try Address(parsing: "tcp:10.0.0.1:80") == .tcp(host: "10.0.0.1", port: 80))
        #expect(try Address(parsing: "tcp:[::1]:0") == .tcp(host: "::1", port: 0))
    }

    @Test("Malformed addresses are refused with a clear error", arguments: [
        "", "/tmp/a.sock", "udp:1.2.3.4:5", "unix:", "tcp:", "tcp:host", "tcp::80", "tcp:host:", "tcp:host:65536",
        "tcp:host:-1", "tcp:host:8o", "tcp:::1:80", "tcp:[::1]", "tcp:[::1:80", "tcp:[127.0.0.1]:80", "tcp:[]:80",
        "unix:/" + String(repeating: "a", count: 120),
    ])
    func malformedAddressesAreRefused(text: String) {
        #expect {
            try Address(parsing: text)
        } throws: { error in
            guard let error = error as? TransportError else { return false }
            return error.code == .invalidAddress && error.message.contains("\"")
        }
    }
}
