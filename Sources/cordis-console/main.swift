import CordisConsole
import Foundation

// cordis-console: see and drive a Cordis cluster through one node (CONTRACTS.md §7).
exit(await Console.main(arguments: Array(CommandLine.arguments.dropFirst())))
