import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// A private D-Bus session bus (`dbus-daemon --session`) with a real `gnome-keyring-daemon`
/// on it, its login keyring created and unlocked with a test password: the Secret Service
/// the daemon keeps its master key in (docs/adr/0045). `lock()` locks the collection over
/// D-Bus, `unlock()` starts the keyring daemon again with the password (what a login does),
/// `freeze()` stops it (SIGSTOP) so it owns the name but never answers. With
/// `loginKeyring: false` it has no collection at all (a user who never logged in to a
/// desktop) until `createDefaultKeyring()` makes one, as Seahorse would.
///
/// ```swift
/// guard let keyring = try SecretServiceSession.start(in: tmp.path) else { return }  // skipped: not installed
/// let alice = try Device.start("alice", in: tmp.path, environment: keyring.environment)
/// ```
public final class SecretServiceSession: @unchecked Sendable {
    public static let password = "sotto-test-password"
    public let root: String
    public let busAddress: String
    private let bus: LoggedProcess
    private var keyring: LoggedProcess?

    /// The variables that point a process at this bus, and the keyring mode.
    public var environment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": busAddress, "SOTTO_KEY_STORE": "keyring"]
    }

    /// Why this machine cannot run one (a missing program), or nil.
    public static var unavailableReason: String? {
        for program in ["/usr/bin/dbus-daemon", "/usr/bin/gnome-keyring-daemon", "/usr/bin/secret-tool", "/usr/bin/dbus-send"]
        where !FileManager.default.isExecutableFile(atPath: program) {
            return "\(program) is not installed (make deps installs it)"
        }
        return nil
    }

    /// Why `createDefaultKeyring()` cannot run here (python3's D-Bus module missing), or nil.
    public static var defaultKeyringUnavailableReason: String? {
        FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbus/__init__.py")
            ? nil : "python3-dbus is not installed (make deps installs it)"
    }

    /// A command that makes a new collection with a password and the alias `default`, what
    /// "Passwords and Keys" (Seahorse) does with "New keyring" and "Set as default", without
    /// its prompt: GNOME Keyring's `CreateWithMasterPassword`, then `SetAlias`. Prints the
    /// collection's path. Run it with the session bus in `DBUS_SESSION_BUS_ADDRESS`.
    public static let createDefaultKeyringCommand = ["/usr/bin/python3", "-c", """
        import dbus
        bus = dbus.SessionBus()
        secrets = bus.get_object('org.freedesktop.secrets', '/org/freedesktop/secrets')
        service = dbus.Interface(secrets, 'org.freedesktop.Secret.Service')
        _, session = service.OpenSession('plain', dbus.String('', variant_level=1))
        gnome = dbus.Interface(secrets, 'org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface')
        label = {'org.freedesktop.Secret.Collection.Label': dbus.String('Default keyring', variant_level=1)}
        password = (session, dbus.ByteArray(b''), dbus.ByteArray(b'\(SecretServiceSession.password)'), 'text/plain')
        path = gnome.CreateWithMasterPassword(label, password)
        service.SetAlias('default', path)
        print(path)
        """]

    public static func start(in parent: String, loginKeyring: Bool = true) throws -> SecretServiceSession {
        let root = parent + "/secret-service"
        for path in [root, root + "/home", root + "/run"] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        // LoggedProcess: its children get default signal handling, so SIGTERM stops them.
        // No service activation: while the test restarts the keyring daemon (an unlock), a
        // lookup must not make the bus start a second, locked one of its own.
        let config = root + "/bus.conf"
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(root)/bus</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let bus = try LoggedProcess.launch("/usr/bin/dbus-daemon", [
            "--config-file=" + config, "--nofork", "--print-address=1",
        ], environment: ProcessInfo.processInfo.environment)
        guard bus.waitForLine(containing: "unix:path=", timeout: 60),
              let address = bus.output.first(where: { $0.hasPrefix("unix:path=") }) else {
            bus.signal(SIGKILL)
            _ = bus.waitForExit()
            throw Device.Failure(message: "dbus-daemon did not print its address: \(bus.output)")
        }
        let session = SecretServiceSession(root: root, busAddress: address, bus: bus)
        try session.startKeyring(login: loginKeyring)
        return session
    }

    private init(root: String, busAddress: String, bus: LoggedProcess) {
        self.root = root
        self.busAddress = busAddress
        self.bus = bus
    }

    deinit { stop() }

    private var toolEnvironment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": busAddress, "HOME": root + "/home", "XDG_RUNTIME_DIR": root + "/run",
         "XDG_DATA_HOME": root + "/home/.local/share"]
    }

    /// Starts the keyring daemon with the password on stdin: the login keyring is created the
    /// first time, unlocked every time. Returns once it owns org.freedesktop.secrets.
    /// `login` false: no password, so no login keyring (as D-Bus activation starts it).
    private func startKeyring(login: Bool = true) throws {
        let child = try LoggedProcess.launch("/bin/sh", [
            // exec with a here-document: the pid is the keyring daemon's own, so a signal reaches it.
            "-c", login ? "exec /usr/bin/gnome-keyring-daemon --foreground --components=secrets --unlock <<EOF\n"
                + "$SOTTO_TEST_KEYRING_PASSWORD\nEOF\n"
                : "exec /usr/bin/gnome-keyring-daemon --foreground --components=secrets </dev/null",
        ], environment: ProcessInfo.processInfo.environment.merging(toolEnvironment) { $1 }
            .merging(["SOTTO_TEST_KEYRING_PASSWORD": Self.password]) { $1 })
        keyring = child
        // Alone it owns the name within a second; a full suite on 2 cores once took it past
        // 10 s (CI of 2026-11-25). One that exits fails at once, with what it printed.
        try waitUntil("gnome-keyring-daemon owns org.freedesktop.secrets", timeoutMs: 120_000) {
            guard child.isRunning else { throw Device.Failure(message: "gnome-keyring-daemon exited: \(child.output.suffix(5))") }
            return self.serviceHasOwner()
        }
    }

    private func serviceHasOwner() -> Bool {
        let reply = try? ChildProcess.run("/usr/bin/dbus-send", [
            "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets",
        ], environment: toolEnvironment)
        return reply?.stdout.contains("boolean true") ?? false
    }

    /// Makes a default keyring (`createDefaultKeyringCommand`); returns its D-Bus path.
    @discardableResult
    public func createDefaultKeyring() throws -> String {
        let command = Self.createDefaultKeyringCommand
        let result = try ChildProcess.run(command[0], Array(command.dropFirst()), environment: toolEnvironment)
        guard result.status == 0 else { throw Device.Failure(message: "creating a default keyring failed: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// What the keyring daemons printed (the current one's).
    public var log: String { keyring?.output.joined(separator: "\n") ?? "" }

    /// Locks the login collection (no prompt is needed to lock).
    public func lock() throws {
        let result = try ChildProcess.run("/usr/bin/dbus-send", [
            "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
            "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login",
        ], environment: toolEnvironment)
        guard result.status == 0 else { throw Device.Failure(message: "lock failed: \(result.stderr)") }
    }

    /// Unlocks as a login does: the keyring daemon starts again with the password.
    public func unlock() throws {
        stopKeyring()
        try startKeyring()
    }

    /// The keyring daemon keeps its name on the bus but answers nothing (SIGSTOP).
    public func freeze() { keyring?.signal(SIGSTOP) }
    public func thaw() { keyring?.signal(SIGCONT) }

    /// `secret-tool lookup application sotto group GROUP`: what the Secret Service holds, or nil.
    public func lookup(group: String) throws -> String? {
        let result = try ChildProcess.run("/usr/bin/secret-tool", ["lookup", "application", "sotto", "group", group],
                                          environment: toolEnvironment)
        return result.status == 0 ? result.stdout : nil
    }

    /// `secret-tool store`: plants an entry with Sotto's attributes (e.g. garbage).
    public func store(group: String, secret: String) throws {
        let result = try ChildProcess.run("/usr/bin/secret-tool", ["store", "--label=planted", "application", "sotto", "group", group],
                                          environment: toolEnvironment, stdin: secret)
        guard result.status == 0 else { throw Device.Failure(message: "secret-tool store failed: \(result.stderr)") }
    }

    public func clear(group: String) throws {
        _ = try ChildProcess.run("/usr/bin/secret-tool", ["clear", "application", "sotto", "group", group],
                                 environment: toolEnvironment)
    }

    private func stopKeyring() {
        guard let keyring else { return }
        keyring.signal(SIGCONT)
        keyring.signal(SIGTERM)
        _ = keyring.waitForExit()
        self.keyring = nil
    }

    public func stop() {
        stopKeyring()
        if bus.isRunning {
            bus.signal(SIGTERM)
            _ = bus.waitForExit()
        }
    }

    private func waitUntil(_ what: String, timeoutMs: Int64 = 10_000, _ condition: () throws -> Bool) throws {
        let deadline = WallClock.nowMs() + timeoutMs
        while try !condition() {
            if WallClock.nowMs() > deadline { throw Device.Failure(message: "timed out waiting for: \(what)") }
            usleep(20_000)
        }
    }
}
