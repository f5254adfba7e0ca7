#if canImport(Glibc)
import Glibc  // links libm, which Int64(exactly: Double) needs
#endif

/// A JSON number, kept exact: an integer literal that fits `Int64` stays an integer, anything else
/// (a fraction, an exponent, or an integer out of range) is a `Double`.
///
/// Equality and hashing compare the numeric value, so `.integer(1) == .double(1.0)`; the serializer
/// keeps the distinction (`1` versus `1.0`), so a parsed number is written back the way it was read.
public enum JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// An integer that fits in 64 bits.
    case integer(Int64)
    /// Any other number. Non-finite values cannot be written as JSON and serialize as `null`.
    case double(Double)

    /// The number as a `Double` (an integer beyond 2^53 is rounded).
    public var doubleValue: Double {
        switch self {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        }
    }

    /// The number as an `Int64` when it is integral and in range, else nil (`2.0` gives 2, `2.5` nil).
    public var int64Value: Int64? {
        switch self {
        case .integer(let value): return value
        case .double(let value): return Int64(exactly: value)
        }
    }

    /// True when the number was written (or built) as an integer.
    public var isInteger: Bool {
        if case .integer = self { return true }
        return false
    }

    /// The number as JSON text, exactly as the serializer writes it.
    public var description: String {
        var bytes: [UInt8] = []
        JSONSerializer.appendNumber(self, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        switch (lhs, rhs) {
        case let (.integer(a), .integer(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.integer(a), .double(b)), let (.double(b), .integer(a)): return Int64(exactly: b) == a
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .integer(let value): hasher.combine(value)
        case .double(let value):
            if let exact = Int64(exactly: value) { hasher.combine(exact) } else { hasher.combine(value) }
        }
    }
}
