import ServiceLifecycle
import SharedStore
import SottoCrypto
import SottoWire

/// The daemon part that posts desktop notifications for workers (``DesktopNotifications``)
/// while it runs; on a graceful shutdown it removes `notifications.sock` first, so workers
/// post their own again.
///
/// ```swift
/// let part = DesktopNotificationsService(runtime: runtime, environment: env)
/// ```
struct DesktopNotificationsService: Service {
    let runtime: RuntimeDirectory
    let environment: [String: String]

    func run() async throws {
        let notifications = DesktopNotifications(socketPath: runtime.notificationsSocketPath,
                                                 openCommand: NotificationOpenCommand(environment: environment))
        notifications.start()
        try? await gracefulShutdown()
        await notifications.stop()
    }
}
