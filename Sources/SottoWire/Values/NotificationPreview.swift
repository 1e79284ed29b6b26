/// What a desktop notification shows of a new message (issue #22): the sender's or
/// conversation's name and the text (`full`), the name only (`name`), or nothing but "New
/// message" (`none`). Set for the device and, overriding it, per conversation; the worker
/// reads the one that applies in the query that writes the message.
///
/// ```swift
/// NotificationPreview(rawValue: "name")   // .name
/// NotificationPreview.deviceDefault      // .full
/// ```
public enum NotificationPreview: String, Sendable, Equatable, CaseIterable {
    case full
    case name
    case none

    /// Without any setting: what Sotto always showed.
    public static let deviceDefault = NotificationPreview.full
    /// The `device_setting` key of the device's choice.
    public static let settingKey = "notificationPreview"
}
