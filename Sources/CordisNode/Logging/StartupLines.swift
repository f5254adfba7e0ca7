import Cordis
import CordisFiles
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// What `NodeRunner` writes besides its log records: `listening on ADDR` and `metrics on URL` on
/// standard output, and the errors that stop a node from starting on standard error.
///
/// In the text format they are the plain lines (`listening on unix:/run/cordis/a.sock`,
/// `error: cannot use entries file …`); with `--log-format json` each is one JSON object like every log
/// record (`JSONLogLine`), its text as `message`, at level `info` for the lines and `error` for the
/// errors, from logger `node`, so every line the node writes is JSON. Writes never end the process: a
/// stream whose reader went away is skipped (`StandardStreams`).
struct StartupLines: Sendable {
    /// The node's name, written as `CORDIS_NODE` in the JSON format.
    let node: String
    /// How the lines are written.
    let format: LogFormat

    /// The line for `text` at `level`, without its line break.
    func line(_ text: String, level: LogLevel) -> String {
        switch format {
        case .text:
            return text
        case .json:
            return JSONLogLine.line(record: LogMessage(level: level, name: "node", text: text), node: node)
        }
    }

    /// Writes `text` (`listening on …`, `metrics on …`) on standard output.
    func out(_ text: String) {
        StandardStreams.printLine(line(text, level: .info))
    }

    /// Writes an error that stops the start on standard error: `error: TEXT` in the text format.
    func error(_ text: String) {
        switch format {
        case .text:
            StandardStreams.printErrorLine(text.hasPrefix("error:") ? text : "error: \(text)")
        case .json:
            let message = text.hasPrefix("error: ") ? String(text.dropFirst("error: ".count)) : text
            StandardStreams.printErrorLine(line(message, level: .error))
        }
    }
}
