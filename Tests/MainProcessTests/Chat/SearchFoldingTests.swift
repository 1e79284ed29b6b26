@testable import SottoCLI
import Testing

/// The chat's search ignores case and accents without Foundation (docs/adr/0068).
@Suite("Search folding")
struct SearchFoldingTests {
    @Test("case and accents are ignored, precomposed or decomposed; other letters are not")
    func folds() {
        #expect(SearchFolding.folded("Crème Brûlée") == "creme brulee")
        #expect(SearchFolding.matches("Une CRÈME brûlée ?", query: "creme"))
        #expect(SearchFolding.matches("Cre\u{0300}me", query: "crème"))   // decomposed in the text
        #expect(SearchFolding.matches("Ærøskøbing", query: "ærø"))
        #expect(SearchFolding.matches("東京で会おう", query: "東京"))
        #expect(!SearchFolding.matches("crane", query: "creme"))
        #expect(!SearchFolding.matches("anything", query: ""))
    }
}
