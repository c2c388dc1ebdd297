import Foundation
import WxStore

enum Geocode {
    static func addByName(_ name: String, timezone: String?, models: [String], elevation: Double?, args: ParsedArguments, context: Context) async throws {
        throw CLIError("looking up '\(name)' needs the geocoding client; give --lat and --lon")
    }
}
