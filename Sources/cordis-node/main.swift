import CordisNode
import Foundation

// cordis-node: a cluster node with the built-in catalog (clock, counter, greeter, badge).
exit(await NodeRunner.main(arguments: Array(CommandLine.arguments.dropFirst())))
