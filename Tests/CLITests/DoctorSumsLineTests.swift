import Testing
import WxStore

@testable import WxCLI

private let why = "so query verify may answer wrongly"
private let run = "Run 'wxdb doctor --deep --repair' to recompute them from the"

/// The "verification sums" line of `doctor --deep`: its two parts (the pairs' kept sums, then the
/// ensembles') say the same four things with their own words.
@Suite("Doctor's verification sums line: the pairs' and the ensembles' sentences")
struct DoctorSumsLineTests {
    @Test(
        "each case reads as it did when both parts were written out",
        arguments: [
            (false, SumsCheck(checked: 5), false, "ok: 5 group(s) match the rows", nil),
            (
                false, SumsCheck(checked: 5, notCheckable: 2), false,
                "ok: 5 group(s) match the rows; 2 group(s) not checkable (pruned runs had pairs in them; their rows are gone)",
                nil
            ),
            (
                false, SumsCheck(checked: 5, differing: ["a", "b", "c", "d"], repaired: 4), true,
                "repaired 4 of 5 group(s) from the rows (e.g. a; b; c)", nil
            ),
            (
                false, SumsCheck(checked: 5, differing: ["a"]), false, "DIFFERENT: 1 of 5 group(s) (e.g. a)",
                "1 of 5 verification sum group(s) differ from the stored rows (e.g. a), \(why) there. \(run) rows"
            ),
            (true, SumsCheck(checked: 3), false, "; ensembles: 3 group(s) match the members", nil),
            (
                true, SumsCheck(checked: 3, notCheckable: 1), false,
                "; ensembles: 3 group(s) match the members, 1 not checkable (pruned runs' members are gone; their cases live only in the sums)",
                nil
            ),
            (
                true, SumsCheck(checked: 3, differing: ["x", "y"], repaired: 2), true,
                "; ensembles: repaired 2 of 3 group(s) from the members (e.g. x; y)", nil
            ),
            (
                true, SumsCheck(checked: 3, notCheckable: 1, differing: ["x", "y"]), false,
                "; ensembles: DIFFERENT: 2 of 3 group(s) (e.g. x; y), 1 not checkable (pruned runs' members are gone; their cases live only in the sums)",
                "2 of 3 ensemble sum group(s) differ from the stored members (e.g. x; y), \(why) for that ensemble. \(run) members"
            )
        ] as [(Bool, SumsCheck, Bool, String, String?)])
    func sentences(_ ensembles: Bool, _ check: SumsCheck, _ repair: Bool, _ line: String, _ expected: String?) {
        var problem: String?
        let said = DoctorCommand.sumsSentence(check, ensembles ? .ensembles : .pairs, repair: repair, problem: &problem)
        #expect(said == line)
        #expect(problem == expected)
    }
}
