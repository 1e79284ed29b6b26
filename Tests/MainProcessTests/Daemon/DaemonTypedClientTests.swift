import ControlProtocol
import Foundation
import SharedStore
import SottoClient
import SottoWire
import TestSupport
import Testing

extension DaemonProcessTests {
    /// SottoClient's typed `ControlClient` against a real daemon: every method of
    /// ControlProtocol called with its params type and answered with its result type, the
    /// `change` notification as a typed value, and the errors as named codes.
    @Suite("Typed client")
    struct TypedClient {
        @Test("every method, typed, against a real daemon; a subscriber gets the sent message as a typed change")
        func everyMethod() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let client = try ControlClient.connect(path: home.controlSocketPath, receiveTimeoutSeconds: 30)

            let status = try client.call(StatusParams())
            #expect(status.pid == Int64(daemon.pid) && status.conversations == 0 && status.control != nil)

            let created = try client.call(NewConversationParams(name: "Typed", profileName: "Ada"))
            #expect(!created.conversationId.isEmpty && !created.inboxId.isEmpty && !created.topic.isEmpty)
            let listed = try client.call(ListConversationsParams()).conversations
            #expect(listed.map(\.id) == [created.conversationId])
            #expect(listed.first?.name == "Typed" && listed.first?.isCreator == true)

            let subscriber = try ControlClient.connect(path: home.controlSocketPath, receiveTimeoutSeconds: 30)
            let subscribed = try subscriber.call(SubscribeParams(since: try client.call(StatusParams()).lastSeq))
            #expect(subscribed.gap == nil)

            let sent = try client.call(SendMessageParams(conversation: String(created.conversationId.prefix(8)), text: "hello typed"))
            var change = try subscriber.nextChange()
            while let seen = change, seen.entityId != sent.messageId { change = try subscriber.nextChange() }
            let inserted = try #require(change)
            #expect(inserted.kind == ChangeKind.messageInserted.rawValue && inserted.text == "hello typed")
            #expect(inserted.outgoing == true && inserted.conversationId == created.conversationId && inserted.seq > subscribed.lastSeq)

            let read = try client.call(ReadMessagesParams(conversation: created.conversationId, limit: 10)).messages
            let mine = try #require(read.first { $0.id == sent.messageId })
            #expect(mine.text == "hello typed" && mine.outgoing && mine.senderName == nil)

            let reaction = try client.call(ReactParams(conversation: created.conversationId, message: String(sent.messageId.prefix(8)), emoji: "👍"))
            #expect(!reaction.messageId.isEmpty && reaction.messageId != sent.messageId)
            #expect(try client.call(MarkReadParams(conversation: created.conversationId)) == EmptyObject())

            let invite = try client.call(CreateInviteParams(conversation: created.conversationId, expiresInMs: 3_600_000))
            #expect(invite.code.hasPrefix("sotto1:") && invite.expiresAtMs != nil)

            let exploded = try client.call(ExplodeParams(conversation: created.conversationId))
            #expect(exploded.conversationId == created.conversationId && exploded.deleted)
            #expect(try client.call(ListConversationsParams()).conversations.isEmpty)
        }

        @Test("errors come back typed: notFound, invalidParams, methodNotFound; no daemon is daemonNotRunning")
        func typedErrors() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let client = try ControlClient.connect(path: home.controlSocketPath, receiveTimeoutSeconds: 30)

            #expect(Self.code { try client.call(ReadMessagesParams(conversation: "deadbeef")) } == .notFound)
            #expect(Self.code { try client.call(JoinConversationParams(code: "sotto1:not-an-invite")) } == .invalidParams)
            let id = try client.call(NewConversationParams()).conversationId
            #expect(Self.code { try client.call(ExplodeParams(conversation: id, atMs: 4_000_000_000_000_000)) } == .invalidParams)
            // Nothing scheduled: nothing to cancel (refused, nothing sent); a time an hour ago is not "now".
            #expect(Self.code { try client.call(ExplodeParams(conversation: id, cancel: true)) } == .refused)
            #expect(Self.code { try client.call(ExplodeParams(conversation: id, atMs: WallClock.nowMs() - 3_600_000)) } == .invalidParams)
            #expect(try client.call(ListConversationsParams()).conversations.first?.expiresAtMs == nil)
            let unknown = try client.callRaw(method: "noSuchMethod", params: [:])
            #expect(unknown == .failure(.methodNotFound("noSuchMethod")))
            // Still serving on the same connection.
            #expect(try client.call(StatusParams()).pid == Int64(daemon.pid))

            do {
                _ = try ControlClient.connect(path: home.runtimePath + "/nothing.sock")
                Issue.record("connected to nothing")
            } catch {
                guard case .daemonNotRunning = error else { Issue.record("\(error)"); return }
            }
        }

        private static func code<T>(_ body: () throws -> T) -> RPCErrorCode? {
            do {
                _ = try body()
                return nil
            } catch {
                guard case .rpc(let rpc)? = error as? ControlClient.Failure else { return nil }
                return rpc.code
            }
        }
    }
}
