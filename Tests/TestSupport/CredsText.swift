/// A `.creds` file as `nsc` writes it (the JWT and seed are syntactically right, not live):
/// for RelayTransport's configuration tests and relayd's lifecycle tests.
///
/// ```swift
/// try CredsText.valid.write(toFile: path, atomically: true, encoding: .utf8)
/// ```
public enum CredsText {
    public static let valid = """
        -----BEGIN NATS USER JWT-----
        eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJqdGkiOiJURVNUIn0.c2lnbmF0dXJl
        ------END NATS USER JWT------

        ************************* IMPORTANT *************************
        NKEY Seed printed below can be used to sign and prove identity.
        NKEYs are sensitive and should be treated as secrets.

        -----BEGIN USER NKEY SEED-----
        SUAMLK2ZNL35WSMW37E7UD4VZ7ELPKW7DHC3BWBSD2GCZ7IUQQXZIORRBU
        ------END USER NKEY SEED------

        *************************************************************

        """
}
