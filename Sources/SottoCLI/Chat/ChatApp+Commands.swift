import ControlProtocol
import FoundationEssentials
import SottoClient
import SottoWire
import Synchronization

/// What an action's callback reports, to be applied on the UI thread.
///
/// ```swift
/// inbox.report(outcome) { [.notice("muted \($0.conversationId)")] }
/// ```
enum ActionOutcome: Sendable {
    case notice(String)
    case panel(title: String, lines: [String])
    /// Open this conversation as soon as the list shows it (created, joined).
    case open(String)
    /// Put this text on the terminal's clipboard (OSC 52): written by the UI thread, which
    /// alone writes to the terminal.
    case copy(String)
}

/// Where the actions' callbacks (on the library's queue) leave their outcomes for the UI
/// thread, which takes them after the wake pipe woke its `poll`.
///
/// ```swift
/// actions.setMuted(true, conversation: id) { [inbox] outcome in
///     inbox.report(outcome) { [.notice($0.muted ? "muted" : "unmuted")] }
/// }
/// for outcome in inbox.take() { apply(outcome) }
/// ```
final class ActionInbox: Sendable {
    private let pending = Mutex<[ActionOutcome]>([])
    private let wake: WakePipe
    private let list: LiveConversationList

    init(wake: WakePipe, list: LiveConversationList) {
        self.wake = wake
        self.list = list
    }

    /// What to show for `outcome` (a failure: the daemon's reason); the list is loaded again,
    /// since the action may have changed it.
    func report<Value>(_ outcome: Result<Value, ControlClient.Failure>, _ success: (Value) -> [ActionOutcome]) {
        let shown: [ActionOutcome]
        switch outcome {
        case .success(let value): shown = success(value)
        case .failure(let failure): shown = [.notice("refused: " + failure.description)]
        }
        pending.withLock { $0 += shown }
        list.refresh()
        wake.wake()
    }

    /// An outcome that changes no conversation (a save's progress and end): shown, no reload.
    func post(_ outcome: ActionOutcome) {
        pending.withLock { $0.append(outcome) }
        wake.wake()
    }

    func take() -> [ActionOutcome] {
        pending.withLock { current in
            defer { current.removeAll() }
            return current
        }
    }
}

// MARK: - Commands typed in the composer

extension ChatApp {
    /// Runs a parsed `/command`. Leave, remove and explode only ask for their confirmation
    /// here; `confirm` does them once the name is typed.
    func run(_ command: SlashCommand) {
        switch command {
        case .help:
            state.panel = ChatPanel(title: "Help (Esc closes)", lines: SlashCommand.helpLines)
        case .new(let name):
            if let name, InertText.containsControls(name) { return notice("a name cannot hold control characters") }
            state.notice = "creating \(name ?? "a conversation")…"
            actions.create(name: name) { [inbox] outcome in
                inbox.report(outcome, { [.open($0.conversationId), .notice("created \(name ?? String($0.conversationId.prefix(12)))")] })
            }
        case .invite(let expiresInMs):
            guard let conversation = state.selected else { return notice("no conversation open to invite to") }
            let name = ChatRenderer.name(of: conversation)
            actions.invite(conversation: conversation.id, expiresInMs: expiresInMs) { [inbox] outcome in
                inbox.report(outcome, { invite in
                    let until = invite.expiresAtMs.map { " (valid until \(ISO8601.string(fromMillis: $0)))" } ?? ""
                    return [.panel(title: "Invite to \(name)\(until) · Esc closes",
                                   lines: [invite.code, "",
                                           "Give it to the other person: /join CODE in their sotto chat, or sotto join CODE.",
                                           "Copied to the clipboard where the terminal allows it (OSC 52)."]),
                            .notice("invite made for \(name)"),
                            // This device's own text: it may go to the terminal's clipboard.
                            .copy(invite.code)]
                })
            }
        case .join(let code):
            state.notice = "asking to join…"
            actions.join(code: code) { [inbox] outcome in
                inbox.report(outcome, { joined in
                    let name = joined.name.map(InertText.line) ?? String(joined.conversationId.prefix(12))
                    return [.open(joined.conversationId),
                            .notice(joined.state == "pending" ? "asked to join \(name): waiting for its creator to accept" : "joined \(name)")]
                })
            }
        case .file(let path):
            guard let conversation = state.selected else { return notice("no conversation open to send a file to") }
            state.notice = "storing and sending the file…"
            actions.sendAttachment(conversation: conversation.id, path: LocalPath.absolute(path)) { [inbox] outcome in
                inbox.report(outcome, { sent in
                    [.notice("sent " + InertText.line(AttachmentLine.text(name: sent.name, size: Int(sent.size), state: .available,
                                                                          caption: nil)))]
                })
            }
        case .save(let destination):
            save(into: destination)
        case .mute(let muted):
            guard let conversation = state.selected else { return notice("no conversation open") }
            let name = ChatRenderer.name(of: conversation)
            actions.setMuted(muted, conversation: conversation.id) { [inbox] outcome in
                inbox.report(outcome, { [.notice(($0.muted ? "muted " : "unmuted ") + name + ($0.muted ? ": no desktop notifications for it here" : ""))] })
            }
        case .leave:
            guard let conversation = state.selected else { return notice("no conversation open") }
            let name = ChatRenderer.name(of: conversation)
            if conversation.isCreator { return notice("you created \(name): /explode deletes it on every device") }
            ask(.leave(conversation: conversation.id), typing: confirmationName(conversation),
                question: "Leave \(name)? Members are told; deleted here.", verb: "leave")
        case .remove(let member):
            guard let conversation = state.selected else { return notice("no conversation open") }
            let name = ChatRenderer.name(of: conversation)
            if !conversation.isCreator { return notice("only the creator of \(name) can remove a member") }
            ask(.remove(member: member, conversation: conversation.id), typing: member,
                question: "Remove \(InertText.line(member)) from \(name)?", verb: "remove")
        case .explode(let inMs, let cancel):
            guard let conversation = state.selected else { return notice("no conversation open") }
            let name = ChatRenderer.name(of: conversation)
            if !conversation.isCreator { return notice("only the creator of \(name) can explode it; /leave leaves it") }
            if cancel {
                actions.explode(conversation: conversation.id, cancel: true) { [inbox] outcome in
                    inbox.report(outcome, { _ in [.notice("\(name) will not explode: called off on every device")] })
                }
                return
            }
            let atMs = inMs.map { WallClock.nowMs() + $0 }
            let when = atMs.map { " at \(ChatRenderer.time($0, offset: state.utcOffsetSeconds))" } ?? " now"
            ask(.explode(conversation: conversation.id, atMs: atMs), typing: confirmationName(conversation),
                question: "Explode \(name) on every device\(when)?", verb: "explode")
        }
    }

    /// `/save`: the selected message's file, else the newest file shown; saved off the UI
    /// thread, its progress and outcome on the status line.
    private func save(into destination: String?) {
        guard state.selected != nil else { return notice("no conversation open") }
        let items = timeline?.current.items ?? []
        let chosen: TimelineItem?
        if let selected = state.selectedMessageId {
            chosen = items.first { $0.id == selected }
        } else {
            chosen = items.last { $0.message.attachment != nil && !$0.isLocalEcho }
        }
        let wasSelected = state.selectedMessageId != nil
        state.selectedMessageId = nil  // the command used the selection, whatever comes of it
        guard let item = chosen, let attachment = item.message.attachment else {
            return notice(wasSelected ? "the selected message is not a file" : "no file here to save")
        }
        let name = InertText.line(attachment.name)
        state.notice = "saving \(name)…"
        let lastShown = Mutex(-1)
        actions.save(message: item.id, to: LocalPath.absolute(destination ?? "."), progress: { [inbox] done, size in
            let percent = size > 0 ? Int(done * 100 / size) : 100
            let due = lastShown.withLock { shown in
                guard percent >= shown + 5 else { return false }
                shown = percent
                return true
            }
            guard due else { return }
            inbox.post(.notice("saving \(name): \(percent)%"))
        }) { [inbox] outcome in
            switch outcome {
            case .success(let saved):
                inbox.post(.notice("saved " + InertText.line(saved.path) + " (\(AttachmentLine.size(Int(saved.attachment.size))))"))
            case .failure(let error):
                inbox.post(.notice("not saved: " + InertText.line(String(describing: error))))
            }
        }
    }

    /// What a person types to confirm an action on `conversation`: its name as shown (a name
    /// with controls shows them inert, and the shown form is what can be typed), or the six
    /// characters of its id an unnamed one shows.
    func confirmationName(_ conversation: ConversationInfo) -> String {
        conversation.name.map(InertText.line) ?? String(conversation.id.prefix(6))
    }

    // MARK: Confirming

    private func ask(_ action: PendingConfirmation.Action, typing expected: String, question: String, verb: String) {
        state.confirmation = PendingConfirmation(action: action, expected: expected, question: question, verb: verb,
                                          savedComposer: state.composer)
        state.composer = ""
        state.panel = nil
    }

    /// Keys while a confirmation waits: text edits what is typed, Enter checks it (exactly the
    /// name: the action; anything else: nothing), Esc or any other key cancels. True when the
    /// key was taken.
    func handleConfirming(_ key: ChatKey) -> Bool {
        guard let confirmation = state.confirmation else { return false }
        switch key {
        case .text(let text):
            state.composer += text
        case .paste(let text, _):
            state.composer += text.oneLine   // a name is one line
        case .backspace:
            if !state.composer.isEmpty { state.composer.removeLast() }
        case .enter:
            let typed = state.composer.trimmingWhitespace()
            state.confirmation = nil
            state.composer = confirmation.savedComposer
            if !typed.isEmpty, typed == confirmation.expected || typed == InertText.line(confirmation.expected) {
                perform(confirmation.action)
            } else {
                state.notice = "not confirmed: nothing was changed (type the name exactly, or Esc)"
            }
        default:
            state.confirmation = nil
            state.composer = confirmation.savedComposer
            state.notice = "cancelled: nothing was changed"
        }
        return true
    }

    private func perform(_ action: PendingConfirmation.Action) {
        let names = Dictionary(state.conversations.map { ($0.id, ChatRenderer.name(of: $0)) }, uniquingKeysWith: { first, _ in first })
        switch action {
        case .leave(let id):
            let name = names[id] ?? String(id.prefix(12))
            state.notice = "leaving \(name)…"
            actions.leave(conversation: id) { [inbox] outcome in
                inbox.report(outcome, { [.notice("left \(name): told \($0.members) member(s); deleted here")] })
            }
        case .remove(let member, let id):
            let name = names[id] ?? String(id.prefix(12))
            state.notice = "removing \(InertText.line(member))…"
            actions.remove(member: member, conversation: id) { [inbox] outcome in
                inbox.report(outcome, { [.notice("removed \(InertText.line(member)) from \(name): told \($0.members) member(s)")] })
            }
        case .explode(let id, let atMs):
            let name = names[id] ?? String(id.prefix(12))
            state.notice = "exploding \(name)…"
            actions.explode(conversation: id, atMs: atMs) { [inbox] outcome in
                inbox.report(outcome, { result in
                    if result.deleted {
                        return [.notice("exploded \(name): told \(result.delivered) member(s), \(result.undelivered) not reached yet; deleted here")]
                    }
                    let when = result.expiresAtMs.map { ISO8601.string(fromMillis: $0) } ?? "?"
                    return [.notice("\(name) will explode at \(when) on every device")]
                })
            }
        }
    }

    // MARK: Outcomes

    private func notice(_ text: String) { state.notice = text }

    /// On the UI thread: applies what the actions reported.
    func applyOutcomes() {
        for outcome in inbox.take() {
            switch outcome {
            case .notice(let text): state.notice = text
            case .panel(let title, let lines): state.panel = ChatPanel(title: title, lines: lines)
            case .open(let id): pendingOpen = id
            case .copy(let text): terminal.write("\u{1b}]52;c;" + Data(text.utf8).base64EncodedString() + "\u{07}")
            }
        }
    }
}
