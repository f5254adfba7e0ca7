/// The rule for node names and entry ids: 1–64 characters of `A-Z a-z 0-9 . _ -`.
package enum PeerName {
    /// The longest name allowed.
    package static let maximumLength = 64

    /// True when `name` follows the rule.
    package static func isValid(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard !utf8.isEmpty, utf8.count <= maximumLength else { return false }
        return utf8.allSatisfy(isAllowed)
    }

    /// Throws `.invalidName`, naming what `what` is (for example "node name"), unless `name` is valid.
    package static func validate(_ name: String, as what: String = "name") throws(WireError) {
        guard isValid(name) else {
            throw WireError(
                .invalidName,
                "invalid \(what) \"\(name.prefix(80))\": use 1–64 characters of A-Z a-z 0-9 . _ -")
        }
    }

    static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
             UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
