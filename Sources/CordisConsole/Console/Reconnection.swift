/// The one reconnect rule of a console that follows the cluster (`watch`, `events --follow`, `web`):
/// after the link to an address is lost, try that address first, then every other address a member was
/// seen with, in turn, each once per round; wait 1 s between attempts, doubled after every round over
/// all of them, up to `ConsoleSession.longestReconnectDelay`.
struct Reconnection: Sendable {
    /// The addresses to try, in order, each once.
    private(set) var candidates: [String]
    /// The index of the address tried next.
    private(set) var next = 0
    /// The wait before the next attempt.
    private(set) var delay: Duration = .seconds(1)

    /// The rule after the link to `address` was lost, knowing the addresses members were `seen` with.
    init(lost address: String, seen: [String]) {
        var candidates = [address]
        for candidate in seen where !candidates.contains(candidate) { candidates.append(candidate) }
        self.candidates = candidates
    }

    /// The address the next attempt dials.
    var target: String { candidates[next] }

    /// The attempt on `target` failed: the next address, and after a whole round a longer wait.
    mutating func failed() {
        next = (next + 1) % candidates.count
        if next == 0 { delay = min(delay * 2, ConsoleSession.longestReconnectDelay) }
    }
}
