/// The version of a `@Remote` interface: FNV-1a 64 of its normalised method signatures, as 16
/// lowercase hex digits.
///
/// Each requirement is written `name(label:Type,label:Type)->Result` with no trivia at all (so
/// white space and comments never change the version), in source order, joined by `;`. A method
/// without a result is written `->Void`.
enum InterfaceVersion {
    /// The FNV-1a 64-bit offset basis.
    static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    /// The FNV-1a 64-bit prime.
    static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// The version of an interface whose methods have the given normalised signatures.
    static func of(_ signatures: [String]) -> String {
        hex(fnv1a(signatures.joined(separator: ";")))
    }

    /// FNV-1a 64 of the text's UTF-8 bytes.
    static func fnv1a(_ text: String) -> UInt64 {
        var hash = offsetBasis
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* prime
        }
        return hash
    }

    /// `value` as 16 lowercase hex digits.
    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
