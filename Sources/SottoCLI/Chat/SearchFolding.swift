// The standard library's canonical decomposition (NFD) is SPI: public Foundation's
// `.diacriticInsensitive` would bring Foundation and its ICU back into `sotto`
// (docs/adr/0068). The toolchain is pinned (Swift 6.3.1); SearchFoldingTests fails if this
// stops folding.
@_spi(_Unicode) import Swift

/// What a search compares: the text decomposed, its combining marks dropped, lowercased, so
/// "creme" finds "Crème" and "CRÈME" (case and accents ignored, as a person searching expects).
///
/// ```swift
/// SearchFolding.folded("Crème Brûlée")                     // "creme brulee"
/// SearchFolding.matches("Une crème brûlée ?", query: "CREME") // true
/// ```
enum SearchFolding {
    static func folded(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text._nfd where scalar.properties.canonicalCombiningClass == .notReordered
            && scalar.properties.generalCategory != .nonspacingMark {
            scalars.append(scalar)
        }
        return String(scalars).lowercased()
    }

    static func matches(_ text: String, query: String) -> Bool {
        let needle = folded(query)
        return !needle.isEmpty && folded(text).contains(needle)
    }
}
