import CordisFiles
import Foundation

/// The controlling terminal for `watch`: raw input (no echo, no line buffering, Ctrl-C as a key), the
/// alternate screen with the cursor hidden, and its size. `restore()` puts everything back.
final class Terminal: @unchecked Sendable {
    // Mutated only on the watch loop's task (enter/restore) and read-only otherwise.
    private var saved = termios()
    private var entered = false
    let input: Int32
    let output: Int32

    init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
        self.input = input
        self.output = output
    }

    /// Switches to raw mode and the alternate screen.
    ///
    /// - Throws: `ConsoleError` `.failed` when stdin is not a terminal.
    func enter() throws {
        guard isatty(input) == 1, tcgetattr(input, &saved) == 0 else {
            throw ConsoleError(.failed, "watch needs a terminal (stdin is not one)")
        }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        tcsetattr(input, TCSAFLUSH, &raw)
        entered = true
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
    }

    /// Leaves the alternate screen, shows the cursor, and restores the saved terminal modes.
    func restore() {
        guard entered else { return }
        entered = false
        write("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(input, TCSAFLUSH, &saved)
    }

    /// The terminal's size (columns, rows); 80×24 when unknown.
    var size: (width: Int, height: Int) {
        var size = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Draws `lines` from the top-left corner, clearing what is left of each line and below.
    func draw(_ lines: [String]) {
        var frame = "\u{1B}[H"
        for (index, line) in lines.enumerated() {
            frame += line + "\u{1B}[0m\u{1B}[K"
            if index < lines.count - 1 { frame += "\r\n" }
        }
        frame += "\u{1B}[J"
        write(frame)
    }

    func write(_ text: String) {
        StandardStreams.write(text, to: output)
    }
}
