import CordisConsole
import Foundation

// cordis-console: see and drive a Cordis cluster through one node.
exit(await Console.main(arguments: Array(CommandLine.arguments.dropFirst())))
