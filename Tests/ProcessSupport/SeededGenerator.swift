/// A small deterministic random number generator (SplitMix64) for the tests: the same seed gives the
/// same sequence, so a failing random case can be run again from its seed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    /// The generator's state; the next number is derived from it.
    public var state: UInt64

    /// A generator whose state starts at `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next number of the sequence.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
