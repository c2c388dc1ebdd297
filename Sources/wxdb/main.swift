import Foundation
import WxCLI

// Pipes closed early (`wxdb export ... | head`) should end quietly, not kill us with SIGPIPE.
signal(SIGPIPE, SIG_IGN)
let code = await WXDB.main(Array(CommandLine.arguments.dropFirst()))
exit(code)
