import Foundation
import WxCore
import WxStore

enum ExportCommand {
    static var command: Command {
        Command(name: "export", abstract: "Write stored runs, observations or forecast/observed pairs as CSV.", subcommands: [])
    }
}
