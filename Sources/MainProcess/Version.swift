/// The version `sotto --version` prints.
enum SottoVersion {
    static let string = "0.1.0"
}
