// swift-tools-version:6.1
import PackageDescription

import Foundation

// The worker must start in a few milliseconds inside a 12 MB budget (docs/adr/0001): it imports
// no Foundation, and it is one static executable (docs/adr/0055): no dynamic loader, no
// libswiftCore.so, libsqlite3.so, libsodium.so or libsecp256k1.so to map and relocate on every
// push (`sotto-notify --help` 3.4 → 1.3 ms). It still dlopens libsystemd for a desktop
// notification when the daemon is not there to post it, and glibc's NSS for getpwuid: both need
// the machine's glibc to be the one it was linked with, which `make build` on that machine is.
// relayd links the Swift runtime statically (loading libstdc++.so costs another 0.5 ms per
// process, so when `make` has prepared .build/static-cxx, a libstdc++.so that is really
// libstdc++.a found first on the library path, it links the C++ runtime statically too). Its
// relative relocations are packed (DT_RELR, which needs ld.bfd, not Swift's default gold).
let staticCXXDirectory = Context.packageDirectory + "/.build/static-cxx"
let staticStdlib: [LinkerSetting] = [.unsafeFlags(
    ["-static-stdlib", "-use-ld=bfd", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]
    + (FileManager.default.fileExists(atPath: staticCXXDirectory + "/libstdc++.so") ? ["-L", staticCXXDirectory] : []))]

/// `pkg-config OPTION PACKAGE`, split into flags (libsecret's include paths are per architecture).
func pkgConfig(_ option: String, _ package: String) -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/pkg-config")
    process.arguments = [option, package]
    let pipe = Pipe()
    process.standardOutput = pipe
    guard (try? process.run()) != nil else { return [] }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: output, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
}

let package = Package(
    name: "Sotto",
    platforms: [.macOS(.v14)],  // Linux is the target; this only sets availability for async entry points
    products: [
        .executable(name: "sotto", targets: ["MainProcess"]),
        .executable(name: "sotto-daemon", targets: ["DaemonProcess"]),
        .executable(name: "sotto-notify", targets: ["NotificationWorker"]),
        .executable(name: "sotto-relayd", targets: ["RelayReceiver"]),
        .library(name: "SharedStore", targets: ["SharedStore"]),
        .library(name: "SottoWire", targets: ["SottoWire"]),
        .library(name: "SottoCrypto", targets: ["SottoCrypto"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        // The daemon's lifecycle (ServiceGroup, signals, graceful shutdown) and its log
        // (swift-log, which it brings, pinned to the version it resolves): docs/adr/0024. Never linked into the worker.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        // The daemon's control socket only (docs/adr/0025): never the worker, never SharedStore.
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
    ],
    targets: [
        // MARK: C libraries from Debian packages
        .systemLibrary(
            name: "CSecp256k1",
            pkgConfig: "libsecp256k1",
            providers: [.apt(["libsecp256k1-dev"])]),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),
        // The NATS C client, for the relay only (docs/adr/0026); never linked into the worker.
        .systemLibrary(
            name: "CNats",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]),
        // libsecret (and GLib), for the daemon's Secret Service only (docs/adr/0045); never
        // linked into the worker, which reads the kernel keyring.
        // A C target with libsecret's flags of its own, not a system-library module: such a
        // module (GLib pulls in <sys/socket.h>) took the socket constants away from `import
        // Glibc` in the daemon's other files.
        .target(
            name: "CSecretService",
            cSettings: [.unsafeFlags(pkgConfig("--cflags", "libsecret-1"))],
            linkerSettings: [.unsafeFlags(pkgConfig("--libs", "libsecret-1"))]),
        // keyctl(2) and add_key(2) as raw syscalls: no library (docs/adr/0045).
        .systemLibrary(name: "CKeyctl"),
        // libfuse3, for the power-cut test file system only (docs/adr/0037).
        .systemLibrary(
            name: "CFuse3",
            pkgConfig: "fuse3",
            providers: [.apt(["libfuse3-dev"])]),

        // MARK: What both processes share. No Foundation, no GRDB: see docs/adr/0001. Only
        // SQLite's C module comes from the GRDB package (GRDBSQLite); neither process uses GRDB
        // itself (docs/adr/0023).
        // The wire: JSON, base64url/hex, push framing, acks, ids, the events datagram, sockets,
        // logs, clocks. No C library: what every process and client can link (docs/adr/0043).
        .target(name: "SottoWire"),
        // Keys, the keystore and the sealed/signed wire formats (Protocol/), on secp256k1 and libsodium.
        .target(
            name: "SottoCrypto",
            dependencies: ["SottoWire", "CSecp256k1", "CSodium", "CKeyctl"]),
        // The database both processes share, and exactly the SQL the worker runs.
        .target(
            name: "SharedStore",
            dependencies: [
                "SottoWire",
                "SottoCrypto",
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),

        // The SQL only the daemon runs (sending, invitations, local state, inbox deletion,
        // explode, protection, salvage, integrity checks, its transactions), on SharedStore's
        // connection: its own module so the worker, which links SharedStore, does not carry it
        // (docs/adr/0023, 0043).
        .target(
            name: "DaemonStore",
            dependencies: ["SharedStore", "SottoWire", "SottoCrypto", .product(name: "GRDBSQLite", package: "GRDB.swift")]),

        // MARK: The daemon and its clients
        // The control socket's wire contract: what the daemon and every client both import.
        .target(
            name: "ControlProtocol",
            dependencies: ["SottoWire"]),
        // The daemon's state with no I/O: the conversation stores, the inbox LRU, the unused-inbox
        // cache and their values (docs/adr/0066). What is above it may use it; it uses nothing of theirs.
        .target(
            name: "DaemonCore",
            dependencies: ["SottoWire", "SottoCrypto"]),
        // The daemon's log: one line per event on stderr, the journal under systemd (docs/adr/0066).
        .target(
            name: "DaemonLogging",
            dependencies: ["SottoWire", .product(name: "Logging", package: "swift-log")]),
        // The control socket on SwiftNIO (docs/adr/0025): connections, limits, JSON-RPC lines. It
        // serves a `ControlRequestHandler` and knows nothing of what answers it (docs/adr/0066).
        .target(
            name: "ControlServer",
            dependencies: [
                "ControlProtocol",
                "SottoWire",
                "DaemonLogging",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        // The daemon's engine (docs/adr/0066): the database handle, the change feed, the services
        // (send, invite, join, leave, remove, rosters), the outbox, explode, the WAL keeper, and
        // `DaemonContext`, the one thing the daemon app and its control requests hold. No socket
        // server, no keyring, no desktop notifications: those are the app's.
        .target(
            name: "DaemonEngine",
            dependencies: [
                "DaemonCore",
                "DaemonLogging",
                "SharedStore",
                "DaemonStore",
                "SottoWire",
                "SottoCrypto",
                "RelayTransport",  // the outbox publishes to relays (docs/adr/0028)
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOPosix", package: "swift-nio"),  // the outbox's pool of blocking pushes (docs/adr/0053)
            ]),
        // The daemon app: start-up, the keyring, desktop notifications, health checks, the
        // long-running parts as services, and the control requests' answers (`RPCDispatcher`,
        // on `DaemonAPI`), where the engine's values become the wire's (docs/adr/0075).
        .target(
            name: "SottoDaemon",
            dependencies: [
                "DaemonEngine",
                "DaemonCore",
                "DaemonLogging",
                "ControlServer",
                "SharedStore",
                "DaemonStore",
                "SottoWire",
                "SottoCrypto",
                "ControlProtocol",
                "CSystemd",
                "CSecretService",  // the master key's home (docs/adr/0045)
                "RelayTransport",  // the outbox publishes to relays (docs/adr/0028)
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        // What talks to a running daemon over its control socket: the CLI, tests, benchmarks, a UI.
        .target(
            name: "SottoClient",
            dependencies: ["SottoWire", "ControlProtocol"]),

        // MARK: The relay (docs/adr/0026)
        // What Sotto needs of NATS JetStream: relay URLs and credentials, mailboxes, consumers.
        .target(
            name: "RelayTransport",
            dependencies: ["SottoWire", "CNats", "CNatsNUID", "CSodium"]),
        // The C client's NUIDs (inbox names) from getrandom, none shared by two connections of
        // one process (docs/adr/0044): exported, so libnats's own calls reach it.
        .target(
            name: "CNatsNUID",
            dependencies: ["CNats"],
            linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=natsNUID_Next"])]),

        // MARK: The processes
        // `sotto`: the command-line client and `sotto chat` (SottoCLI), with the Swift runtime
        // and Foundation linked statically: a command starts as a client, not as the daemon
        // (docs/adr/0068). Its daemon-side verbs exec `sotto-daemon`. Compiled against the
        // static modules too, so that its object lists every archive static Foundation needs.
        .executableTarget(
            name: "MainProcess",
            dependencies: ["SottoCLI"],
            swiftSettings: [.unsafeFlags(["-static-executable"])],
            linkerSettings: [.unsafeFlags(["-static-executable"])]),
        // The CLI's commands and the chat app, on the client library: no SottoDaemon, crypto,
        // SQLite, libsecret, libnats or NIO.
        .target(
            name: "SottoCLI",
            dependencies: ["SottoClient", "ControlProtocol", "SottoWire", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        // `sotto-daemon`: the main process (`sotto daemon`) and what works on the group
        // directory, the keyring and systemd (install, uninstall, key, repair).
        .executableTarget(
            name: "DaemonProcess",
            dependencies: ["SottoDaemon", "SottoClient", "ControlProtocol", "SharedStore", "SottoWire", "SottoCrypto", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .executableTarget(
            name: "NotificationWorker",
            dependencies: ["SharedStore", "SottoWire", "SottoCrypto"],
            linkerSettings: [.unsafeFlags(["-static-executable", "-use-ld=bfd"])]),  // docs/adr/0055
        // `sotto-relayd`: the device's always-on relay receiver; hands each mailbox message to
        // push.sock like a remote sender and acks the relay after the worker's ack.
        .executableTarget(
            name: "RelayReceiver",
            dependencies: ["RelayTransport", "SottoWire", "SottoCrypto"],
            linkerSettings: staticStdlib),

        // MARK: Tests
        .target(
            name: "TestSupport",
            dependencies: ["SharedStore", "DaemonStore", "SottoWire", "SottoCrypto", "ControlProtocol", "SottoClient"],
            path: "Tests/TestSupport"),
        .executableTarget(
            name: "sotto-store-probe",
            dependencies: ["SharedStore", "SottoWire", "SottoCrypto"],
            path: "Tests/StoreProbe"),
        // Writes the control API document (scripts/openrpc.sh); its test only compares.
        .executableTarget(
            name: "sotto-openrpc",
            dependencies: ["ControlProtocol"],
            path: "Tests/OpenRPCWriter"),
        // Encrypts and decrypts a generated attachment in its own process, for the peak-RSS
        // test (AttachmentMemoryTests).
        .executableTarget(
            name: "sotto-attachment-probe",
            dependencies: ["SottoCrypto", "SottoWire"],
            path: "Tests/AttachmentProbe"),
        .executableTarget(
            name: "sotto-keystore-probe",
            dependencies: ["SottoCrypto", "TestSupport"],
            path: "Tests/KeystoreProbe"),
        // A FUSE passthrough that forgets every write not made durable when the "power" is cut
        // (docs/adr/0037); the power-loss tests mount it.
        .executableTarget(
            name: "sotto-powercut-fs",
            dependencies: ["CFuse3"],
            path: "Tests/PowerCutFS"),
        // A desktop notification server that tells only the poster of a notification that it
        // was clicked, as dunst and KDE do (docs/adr/0046).
        .executableTarget(
            name: "sotto-test-notification-server",
            dependencies: ["CSystemd"],
            path: "Tests/NotificationServer"),
        // A test target per module, named for it (docs/adr/0065); the worker's, the daemon's
        // and the relay's end-to-end tests are the process targets below.
        .testTarget(
            name: "SottoWireTests",
            dependencies: ["SottoWire", "SottoCrypto", "TestSupport"]),
        .testTarget(
            name: "SottoCryptoTests",
            dependencies: ["SottoCrypto", "SottoWire", "TestSupport"]),
        .testTarget(
            name: "SharedStoreTests",
            dependencies: ["SharedStore", "DaemonStore", "SottoWire", "SottoCrypto", "TestSupport"]),
        .testTarget(
            name: "DaemonStoreTests",
            dependencies: ["DaemonStore", "SharedStore", "SottoCrypto", "TestSupport"]),
        .testTarget(
            name: "ControlProtocolTests",
            dependencies: ["ControlProtocol", "SottoWire", "SottoClient", "TestSupport"]),
        // The client library's own tests, with no daemon (its tests with real daemons are in
        // MainProcessTests/Client).
        .testTarget(
            name: "SottoClientTests",
            dependencies: ["SottoClient", "ControlProtocol", "SottoWire"]),
        .testTarget(
            name: "RelayTransportTests",
            dependencies: ["RelayTransport", "SottoWire", "SottoCrypto", "TestSupport"]),
        .testTarget(
            name: "NotificationWorkerTests",
            dependencies: ["SharedStore", "DaemonStore", "SottoWire", "SottoCrypto", "TestSupport"]),
        .testTarget(
            name: "MainProcessTests",
            dependencies: ["SottoCLI", "DaemonProcess", "SottoDaemon", "DaemonEngine", "DaemonCore", "SottoClient", "ControlProtocol", "SharedStore", "DaemonStore", "SottoWire", "SottoCrypto", "TestSupport"]),
        // The daemon's modules, each tested by a target named for it (docs/adr/0066).
        .testTarget(
            name: "DaemonCoreTests",
            dependencies: ["DaemonCore", "SottoCrypto", "SottoWire", "TestSupport"]),
        .testTarget(
            name: "DaemonEngineTests",
            dependencies: ["DaemonEngine", "DaemonCore", "DaemonLogging", "DaemonStore", "SharedStore", "SottoCrypto", "SottoWire", "TestSupport"]),
        .testTarget(
            name: "ControlServerTests",
            dependencies: ["ControlServer", "ControlProtocol", "SharedStore", "SottoWire", "TestSupport", .product(name: "NIOCore", package: "swift-nio")]),
        .testTarget(
            name: "DaemonLoggingTests",
            dependencies: ["DaemonLogging", "SottoWire", .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "SottoDaemonTests",
            dependencies: ["SottoDaemon", "DaemonEngine", "DaemonStore", "SharedStore", "ControlProtocol", "TestSupport"]),
        // `sotto install --user` under a real systemd --user manager (root; skips elsewhere).
        .testTarget(
            name: "SystemdTests",
            dependencies: ["SottoWire", "SottoCrypto", "TestSupport"]),
        // The relay with real nats-server processes, sotto-relayd and workers (skips without nats-server).
        .testTarget(
            name: "RelayTests",
            dependencies: ["RelayTransport", "SharedStore", "DaemonStore", "SottoWire", "SottoCrypto", "TestSupport"]),
        // Real processes on real files: `swift test --filter Stress`; `make stress` for the full profile.
        .testTarget(
            name: "StressTests",
            dependencies: ["SharedStore", "SottoWire", "SottoCrypto", "ControlProtocol", "SottoClient", "TestSupport"]),

        // MARK: Benchmarks
        .executableTarget(
            name: "ProtocolBench",
            dependencies: ["SharedStore", "DaemonStore", "SottoWire", "SottoCrypto"],
            path: "Benchmarks/ProtocolBench"),
        .executableTarget(
            name: "ControlWireBench",
            dependencies: ["ControlProtocol", "SottoWire"],
            path: "Benchmarks/ControlWireBench"),
        .executableTarget(
            name: "DaemonBench",
            dependencies: ["SottoDaemon", "DaemonEngine", "DaemonCore", "SharedStore", "DaemonStore", "SottoWire", "SottoCrypto", "TestSupport"],
            path: "Benchmarks/DaemonBench"),
        .executableTarget(
            name: "DaemonE2EBench",
            dependencies: ["SottoWire", "SottoCrypto", "ControlProtocol", "SottoClient", "TestSupport"],
            path: "Benchmarks/DaemonE2EBench"),
        .executableTarget(
            name: "ChatE2EBench",
            dependencies: ["SottoWire", "ControlProtocol", "SottoClient", "TestSupport"],
            path: "Benchmarks/ChatE2EBench"),
        .executableTarget(
            name: "PageUpBench",
            dependencies: ["SottoWire", "ControlProtocol", "SottoClient", "TestSupport"],
            path: "Benchmarks/PageUpBench"),
        .executableTarget(
            name: "NotifyBench",
            dependencies: ["SharedStore", "SottoWire", "TestSupport"],
            path: "Benchmarks/NotifyBench"),
        .executableTarget(
            name: "RelayBench",
            dependencies: ["RelayTransport", "SottoWire", "TestSupport"],
            path: "Benchmarks/RelayBench"),
        .executableTarget(
            name: "RelayPrivacyBench",
            dependencies: ["RelayTransport", "SharedStore", "TestSupport"],
            path: "Benchmarks/RelayPrivacyBench"),
        .executableTarget(
            name: "RelaySleepingBench",
            dependencies: ["RelayTransport", "SharedStore", "TestSupport"],
            path: "Benchmarks/RelaySleepingBench"),
        .executableTarget(
            name: "RelayE2EBench",
            dependencies: ["SottoWire", "ControlProtocol", "SottoClient", "TestSupport"],
            path: "Benchmarks/RelayE2EBench"),
        .executableTarget(
            name: "RelaySendBench",
            dependencies: ["RelayTransport", "SharedStore", "SottoCrypto", "TestSupport"],
            path: "Benchmarks/RelaySendBench"),
        .executableTarget(
            name: "BodyBench",
            dependencies: ["RelayTransport", "SottoWire", "SottoCrypto", "TestSupport"],
            path: "Benchmarks/BodyBench"),
        .executableTarget(
            name: "FanoutBench",
            dependencies: ["ControlProtocol", "RelayTransport", "SottoClient", "SharedStore", "SottoWire", "SottoCrypto", "TestSupport"],
            path: "Benchmarks/FanoutBench"),
        .executableTarget(
            name: "RosterBench",
            dependencies: ["SottoWire", "SottoCrypto", "TestSupport"],
            path: "Benchmarks/RosterBench"),
        .executableTarget(
            name: "SendBench",
            dependencies: ["DaemonStore", "ControlProtocol", "SottoClient", "SharedStore", "SottoWire", "SottoCrypto", "TestSupport"],
            path: "Benchmarks/SendBench"),
        .executableTarget(
            name: "AttachmentBench",
            dependencies: ["SottoCrypto", "SottoWire", "CSodium"],
            path: "Benchmarks/AttachmentBench"),
        .executableTarget(
            name: "AttachmentRelayBench",
            dependencies: ["RelayTransport", "SottoCrypto", "SottoWire", "CSodium", "CNats", "TestSupport"],
            path: "Benchmarks/AttachmentRelayBench"),
        .executableTarget(
            name: "AttachmentFanoutBench",
            dependencies: ["ControlProtocol", "RelayTransport", "SottoClient", "SharedStore", "SottoWire", "SottoCrypto", "TestSupport"],
            path: "Benchmarks/AttachmentFanoutBench"),
        .executableTarget(
            name: "WorkerBench",
            dependencies: ["SottoWire", "SottoCrypto", "TestSupport"],
            path: "Benchmarks/WorkerBench",
            exclude: ["baseline.c", "acker.c"]),
    ]
)
