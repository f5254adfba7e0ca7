#if canImport(Glibc)
import Glibc
#endif

/// RFC 3339 UTC timestamps as signed trees write them: `2026-12-01T11:00:00Z`, optionally with a
/// fraction of a second (`…:00.250Z`); an offset other than `Z` (or `+00:00`) is refused.
public enum RFC3339 {
    /// The text of `seconds` since 1970, whole seconds, UTC.
    public static func format(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))Z"
    }

    /// Seconds since 1970 of a UTC timestamp, or nil when `text` is not one.
    public static func parse(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), bytes[4] == 0x2D, let month = number(5..<7), bytes[7] == 0x2D,
            let day = number(8..<10), bytes[10] == 0x54 || bytes[10] == 0x74,
            let hour = number(11..<13), bytes[13] == 0x3A, let minute = number(14..<16), bytes[16] == 0x3A,
            let second = number(17..<19)
        else { return nil }
        guard (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }
        var index = 19
        var fraction = 0.0
        if bytes[index] == 0x2E {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        let zone = String(decoding: bytes[index...], as: UTF8.self)
        guard zone == "Z" || zone == "z" || zone == "+00:00" else { return nil }
        // Days from the civil date (Howard Hinnant's algorithm), so no time zone of the host is involved.
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let monthIndex = (month + 9) % 12
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second) + fraction
    }
}
