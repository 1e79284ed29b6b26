/// The version `sotto --version` prints.
public enum SottoVersion {
    public static let string = "0.1.0"
}
