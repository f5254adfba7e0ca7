/// How input text is quoted in error messages: short, and only characters that show as themselves, so
/// a message never carries a whole line of someone's file or a terminal escape sequence.
package enum PrintableText {
    /// At most this many characters of input are quoted.
    package static let quoteLimit = 40

    /// `text` in double quotes: `excerpt(text)`.
    package static func quoted(_ text: String) -> String {
        "\"" + excerpt(text) + "\""
    }

    /// `text` cut to `quoteLimit` characters (then `...`), with `?` for each character that is not printable.
    package static func excerpt(_ text: String) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            guard count < quoteLimit else {
                result += "..."
                break
            }
            result.unicodeScalars.append(isPrintable(scalar) ? scalar : "?")
            count += 1
        }
        return result
    }

    /// Whether `scalar` can be shown in a message as itself: printable ASCII, or a letter, mark,
    /// number, punctuation or symbol beyond ASCII (not a control, format character such as a bidi
    /// override, separator, private-use or unassigned one).
    package static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar.value >= 0x20 && scalar.value < 0x7F }
        switch scalar.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator,
             .spaceSeparator:
            return false
        default:
            return true
        }
    }
}
