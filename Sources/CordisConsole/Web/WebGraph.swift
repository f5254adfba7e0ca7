import Foundation

/// Lays a DOT graph out as SVG with Graphviz: the `dot` program, run on the text the terminal's
/// `graph --format dot` prints, in a folder of its own, bounded in time.
struct WebGraph: Sendable {
    /// Why there is no SVG.
    struct Failure: Error, Sendable, Hashable {
        /// What happened, for the page.
        var message: String
    }

    /// The `dot` program (found on `PATH`), nil when Graphviz is not installed.
    let program: URL?
    /// The folder the DOT and SVG files are written in.
    let folder: URL
    /// How long one layout may take before `dot` is killed.
    let deadline: Duration

    /// A layouter that writes in `folder`, with `dot` from `PATH`.
    init(folder: URL, deadline: Duration = .seconds(30), environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.folder = folder
        self.deadline = deadline
        program = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent("dot") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// The SVG element of `dot`'s layout (without the XML prolog), or why not.
    func svg(_ text: String) async -> Result<String, Failure> {
        guard let program else {
            return .failure(Failure(message: "Graphviz is not installed (no dot on PATH): install the graphviz package"))
        }
        let input = folder.appendingPathComponent("graph.dot")
        let output = folder.appendingPathComponent("graph.svg")
        do {
            try Data(text.utf8).write(to: input)
        } catch {
            return .failure(Failure(message: "cannot write \(input.path): \(error)"))
        }
        let process = Process()
        process.executableURL = program
        process.arguments = ["-Tsvg", "-o", output.path, input.path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let status: Int32 = await withCheckedContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(returning: -1)
                return
            }
            let pid = process.processIdentifier
            let (seconds, attoseconds) = deadline.components
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(seconds * 1000 + attoseconds / 1_000_000_000_000_000))) {
                if process.isRunning { kill(pid, SIGKILL) }
            }
        }
        guard status == 0, let data = try? Data(contentsOf: output) else {
            return .failure(Failure(message: "dot failed (exit \(status)) laying out the graph"))
        }
        let svg = String(decoding: data, as: UTF8.self)
        guard let start = svg.range(of: "<svg") else { return .failure(Failure(message: "dot wrote no SVG")) }
        return .success(String(svg[start.lowerBound...]))
    }
}
