import SottoWire

/// What notifications show, as `sotto notifications` reads or sets it: the device's choice,
/// and for one conversation its own (nil: it follows the device). The daemon app makes the
/// wire's `NotificationPreviewResult` of it.
///
/// ```swift
/// let choice = try await service.notificationPreview(conversation: "3fa2", set: nil)
/// choice.effective   // the conversation's own, else the device's
/// ```
public struct NotificationPreviewChoice: Sendable, Equatable {
    public let device: NotificationPreview
    /// The conversation asked about, nil for the device's setting.
    public let conversationId: String?
    public let conversation: NotificationPreview?

    public var effective: NotificationPreview { conversation ?? device }
}
