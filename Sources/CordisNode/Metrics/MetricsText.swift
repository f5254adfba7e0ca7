/// A Prometheus text exposition (format 0.0.4) being written: each family's `# HELP` and `# TYPE`
/// lines, then its samples, label values escaped as the format asks.
struct MetricsText: Sendable {
    /// The text so far.
    private(set) var text = ""

    /// Starts family `name` of `type` (`gauge`, `counter`, `histogram`) described by `help`.
    mutating func family(_ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(type)\n"
    }

    /// One sample of `name` with `labels`.
    mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " " + Self.format(value) + "\n"
    }

    /// A gauge family with one unlabelled sample.
    mutating func gauge(_ name: String, _ help: String, _ value: Int) {
        family(name, "gauge", help)
        sample(name, [], value)
    }

    /// One sample with an integer value.
    mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Int) {
        sample(name, labels, Double(value))
    }

    /// A value as the format writes it: integers without a fraction, `+Inf`, `-Inf`, `NaN`.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// A label value with `\`, `"` and line feeds escaped.
    static func escapeLabel(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    /// A `# HELP` text with `\` and line feeds escaped.
    static func escapeHelp(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}

/// A histogram's buckets, sum and count, written as the format's cumulative `_bucket{le=…}` samples
/// (`+Inf` last), `_sum` and `_count`.
struct MetricsHistogram: Sendable, Hashable {
    /// The buckets' upper bounds, ascending.
    let bounds: [Double]
    /// Observations per bucket (not cumulative); the last slot is above every bound.
    private(set) var counts: [Int]
    /// The sum of every observation.
    private(set) var sum = 0.0
    /// How many observations there were.
    private(set) var count = 0

    /// An empty histogram with `bounds`.
    init(bounds: [Double]) {
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count + 1)
    }

    /// Adds one observation (a value that is not finite or below 0 counts as 0).
    mutating func observe(_ value: Double) {
        let value = value.isFinite ? max(0, value) : 0
        let index = bounds.firstIndex { value <= $0 } ?? bounds.count
        counts[index] += 1
        sum += value
        count += 1
    }

    /// Writes the samples of `name` with `labels` (the family is started by the caller).
    func write(_ name: String, _ labels: [(String, String)], into text: inout MetricsText) {
        var cumulative = 0
        for (index, bound) in bounds.enumerated() {
            cumulative += counts[index]
            text.sample(name + "_bucket", labels + [("le", MetricsText.format(bound))], cumulative)
        }
        text.sample(name + "_bucket", labels + [("le", "+Inf")], count)
        text.sample(name + "_sum", labels, sum)
        text.sample(name + "_count", labels, count)
    }
}
