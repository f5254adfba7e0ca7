import CordisNode
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

// cordis-node: a cluster node with the built-in catalog (clock, counter, greeter, badge).
exit(await NodeRunner.main(arguments: Array(CommandLine.arguments.dropFirst())))
