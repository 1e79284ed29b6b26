import SharedStore
import SottoWire

/// Settings of this device as a whole (`device_setting`), as opposed to a conversation's
/// local state: today what notifications show when a conversation does not say
/// (`NotificationPreview`). The worker reads it inside the query that writes a message.
///
/// ```swift
/// try DeviceSettings.setNotificationPreview(.name, on: conn)
/// try DeviceSettings.notificationPreview(on: conn)            // .name
/// try DeviceSettings.conversationPreview(conversationId: id, on: conn)   // nil: the device's
/// ```
public enum DeviceSettings {
    public static func notificationPreview(on conn: SQLiteConnection) throws(StoreError) -> NotificationPreview {
        try conn.queryOne("SELECT value FROM device_setting WHERE key = ?", [.text(NotificationPreview.settingKey)])
            .flatMap { row throws(StoreError) in NotificationPreview(rawValue: try row.string(0)) } ?? .deviceDefault
    }

    public static func setNotificationPreview(_ preview: NotificationPreview, on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("INSERT OR REPLACE INTO device_setting(key, value) VALUES (?, ?)",
                     [.text(NotificationPreview.settingKey), .text(preview.rawValue)])
    }

    /// The conversation's own choice, nil when it follows the device.
    public static func conversationPreview(conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> NotificationPreview? {
        try conn.queryOne("SELECT notificationPreview FROM conversation_local_state WHERE conversationId = ?",
                          [.text(conversationId)])
            .flatMap { row throws(StoreError) in try row.optionalString(0).flatMap(NotificationPreview.init(rawValue:)) }
    }
}
