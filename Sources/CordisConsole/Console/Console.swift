import CordisFiles
import CordisJSON
import CordisControl
import CordisWire
import Foundation

/// `cordis-console`: parses the command line, holds one link to one node, runs the command and returns
/// the exit code. The node reached relays requests for the other members.
public enum Console {
    /// Runs the console with `arguments` (without the program name); returns the exit code.
    ///
    /// SIGPIPE is ignored for the whole process first: a reader of its output that goes away
    /// (`cordis-console status | head -1`) never kills it; the rest of the output is dropped, and
    /// `events --follow` ends (exit 0) once its output has nowhere to go.
    public static func main(
        arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        output: ConsoleOutput = .standard
    ) async -> Int32 {
        StandardStreams.ignoreBrokenPipes()
        let (arguments, discovery) = DiscoveryListing.split(arguments, environment: environment)
        let parsed: ConsoleArguments
        do {
            parsed = try ConsoleArguments(parsing: arguments, environment: environment)
        } catch {
            output.err("error: \(error.message)\n\(ConsoleArguments.usage)\n")
            return error.exitCode
        }
        if parsed.command == .help {
            output.out(ConsoleArguments.usage + "\n")
            return 0
        }
        if parsed.command == .version {
            output.out(ConsoleArguments.versionLine + "\n")
            return 0
        }
        if let discovery, parsed.command == .members {
            return await DiscoveryListing.run(discovery: discovery, json: parsed.json, timeout: parsed.timeout, output: output)
        }
        do {
            if case .sign(let key, let node, let version, let expires, let tree) = parsed.command {
                return try SignedTreeCommands.sign(
                    key: key, node: node, version: version, expires: expires, tree: tree, output: output)
            }
            let session = try await ConsoleSession.open(parsed)
            let code: Int32
            do {
                code = try await session.run(parsed.command, output: output)
            } catch {
                await session.close()
                throw error
            }
            await session.close()
            return code
        } catch let error as ConsoleError {
            output.err("error: \(error.message)\n")
            return error.exitCode
        } catch {
            output.err("error: \(error)\n")
            return 1
        }
    }
}
