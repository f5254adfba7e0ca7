/// The payload of the best-effort `error` message the transport sends before closing a connection
/// that broke the framing rules, so the peer can log why it was cut off.
enum ErrorFrame {
    /// `{"type":"error","code":CODE,"message":MESSAGE}` as UTF-8 JSON.
    static func payload(code: String, message: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.append(contentsOf: #"{"type":"error","code":"#.utf8)
        appendString(code, to: &bytes)
        bytes.append(contentsOf: #","message":"#.utf8)
        appendString(message, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private static func appendString(_ text: String, to bytes: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0..<0x20:
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
