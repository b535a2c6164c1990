import Testing

@testable import HTTPDNSServer

/// Every transition of a request's state (`RequestState`), without a socket: each phase is
/// reached through the events the access handler sees, then every event is applied to it.
@Suite struct RequestStateTests {
    typealias Action = RequestState.Action

    /// A name for an action, for readable tables.
    static func name(_ action: Action) -> String {
        switch action {
        case .proceed: "proceed"
        case .appendBody: "appendBody"
        case .discardBody: "discardBody"
        case .answer: "answer"
        case .dispatch: "dispatch"
        case .refuseTooLarge: "refuseTooLarge"
        case .send: "send"
        case .sendAnswer: "sendAnswer"
        case .suspend: "suspend"
        case .resume: "resume"
        case .forget: "forget"
        case .drop: "drop"
        case .reject: "reject"
        }
    }

    static func name(_ phase: RequestState.Phase) -> String {
        switch phase {
        case .receivingHead: "receivingHead"
        case .receivingBody: "receivingBody"
        case .bodyTooLarge: "bodyTooLarge"
        case .dispatched: "dispatched"
        case .suspended: "suspended"
        case .answerReady: "answerReady"
        case .responded: "responded"
        case .aborted: "aborted"
        }
    }

    static let limit = 10

    /// The state after the events that lead to `phase`, each checked on the way.
    static func reach(_ phase: String) -> RequestState {
        var state = RequestState()
        func step(_ expected: String, _ event: (inout RequestState) -> Action) {
            #expect(name(event(&state)) == expected)
        }
        switch phase {
        case "receivingHead": break
        case "receivingBody": step("appendBody") { $0.bodyChunk(total: 4, limit: limit) }
        case "bodyTooLarge": step("discardBody") { $0.bodyChunk(total: 11, limit: limit) }
        case "dispatched": step("answer") { $0.requestComplete() }
        case "suspended":
            step("answer") { $0.requestComplete() }
            step("suspend") { $0.handlerDeferred() }
        case "answerReady":
            state = reach("suspended")
            step("resume") { $0.answerArrived() }
        case "responded":
            step("answer") { $0.requestComplete() }
            step("send") { $0.handlerAnswered() }
        case "aborted": step("proceed") { $0.connectionClosed() }
        default: Issue.record("no way to \(phase)")
        }
        #expect(name(state.phase) == phase)
        return state
    }

    static let phases = [
        "receivingHead", "receivingBody", "bodyTooLarge", "dispatched", "suspended", "answerReady", "responded", "aborted",
    ]

    /// Applies `event` in every phase: the action and the phase after it, by phase.
    static func outcomes(_ event: (inout RequestState) -> Action) -> [String: String] {
        var table: [String: String] = [:]
        for phase in phases {
            var state = reach(phase)
            let action = event(&state)
            table[phase] = "\(name(action)) -> \(name(state.phase))"
        }
        return table
    }

    @Test func aBodyChunkIsKeptWithinTheLimitAndDroppedOverIt() {
        #expect(
            Self.outcomes { $0.bodyChunk(total: 10, limit: Self.limit) } == [
                "receivingHead": "appendBody -> receivingBody", "receivingBody": "appendBody -> receivingBody",
                "bodyTooLarge": "proceed -> bodyTooLarge", "dispatched": "reject -> dispatched", "suspended": "reject -> suspended",
                "answerReady": "reject -> answerReady", "responded": "reject -> responded", "aborted": "reject -> aborted",
            ])
        #expect(
            Self.outcomes { $0.bodyChunk(total: 11, limit: Self.limit) } == [
                "receivingHead": "discardBody -> bodyTooLarge", "receivingBody": "discardBody -> bodyTooLarge",
                "bodyTooLarge": "proceed -> bodyTooLarge", "dispatched": "reject -> dispatched", "suspended": "reject -> suspended",
                "answerReady": "reject -> answerReady", "responded": "reject -> responded", "aborted": "reject -> aborted",
            ])
    }

    @Test func theCompleteRequestGoesToTheHandlerOrSendsWhatIsReady() {
        #expect(
            Self.outcomes { $0.requestComplete() } == [
                "receivingHead": "answer -> dispatched", "receivingBody": "dispatch -> dispatched",
                "bodyTooLarge": "refuseTooLarge -> responded", "dispatched": "reject -> dispatched", "suspended": "reject -> suspended",
                "answerReady": "sendAnswer -> responded", "responded": "reject -> responded", "aborted": "reject -> aborted",
            ])
    }

    @Test func aRefusalIsSentOnlyBeforeTheHandlerHasTheRequest() {
        #expect(
            Self.outcomes { $0.refused() } == [
                "receivingHead": "send -> responded", "receivingBody": "send -> responded", "bodyTooLarge": "send -> responded",
                "dispatched": "reject -> dispatched", "suspended": "reject -> suspended", "answerReady": "send -> responded",
                "responded": "reject -> responded", "aborted": "reject -> aborted",
            ])
    }

    @Test func theHandlerAnswersOrDefersOnlyARequestItHas() {
        var rejected = Dictionary(uniqueKeysWithValues: Self.phases.map { ($0, "reject -> \($0)") })
        rejected["dispatched"] = "send -> responded"
        #expect(Self.outcomes { $0.handlerAnswered() } == rejected)
        rejected["dispatched"] = "suspend -> suspended"
        #expect(Self.outcomes { $0.handlerDeferred() } == rejected)
    }

    @Test func onlyTheFirstAnswerOfASuspendedRequestResumesIt() {
        var dropped = Dictionary(uniqueKeysWithValues: Self.phases.map { ($0, "drop -> \($0)") })
        dropped["suspended"] = "resume -> answerReady"
        #expect(Self.outcomes { $0.answerArrived() } == dropped)
    }

    @Test func aClosedConnectionAbortsAndASuspendedOneIsForgotten() {
        var aborted = Dictionary(uniqueKeysWithValues: Self.phases.map { ($0, "proceed -> aborted") })
        aborted["suspended"] = "forget -> aborted"
        #expect(Self.outcomes { $0.connectionClosed() } == aborted)
    }

    /// The connection closed while it waited (a client gone, or the daemon stopped): the answer
    /// that comes afterwards is dropped and nothing resumes the connection.
    @Test func anAnswerAfterTheConnectionClosedIsDropped() {
        var state = Self.reach("suspended")
        #expect(Self.name(state.connectionClosed()) == "forget")
        #expect(Self.name(state.answerArrived()) == "drop")
        #expect(Self.name(state.requestComplete()) == "reject")
        #expect(Self.name(state.phase) == "aborted")
    }

    /// A deferred request from its head to its answer, with a second answer (shutdown's 503
    /// racing the upstream's) that changes nothing.
    @Test func aDeferredRequestIsAnsweredOnceAfterItsResume() {
        var state = RequestState()
        #expect(Self.name(state.bodyChunk(total: 3, limit: Self.limit)) == "appendBody")
        #expect(Self.name(state.bodyChunk(total: 6, limit: Self.limit)) == "appendBody")
        #expect(Self.name(state.requestComplete()) == "dispatch")
        #expect(Self.name(state.handlerDeferred()) == "suspend")
        #expect(Self.name(state.answerArrived()) == "resume")
        #expect(Self.name(state.answerArrived()) == "drop")
        #expect(Self.name(state.requestComplete()) == "sendAnswer")
        #expect(Self.name(state.connectionClosed()) == "proceed")
        #expect(Self.name(state.phase) == "aborted")
    }

    /// The context keeps the first answer of a suspended request for the resumed call, once;
    /// shutdown's 503 racing it, or an answer after the connection closed, is dropped.
    @Test func theContextKeepsOnlyTheAnswerThatResumes() {
        let context = RequestContext(Self.reach("suspended"))
        #expect(context.answerArrived(HTTPResponse(status: 200, body: [])) == .resume)
        #expect(context.answerArrived(HTTPServer.shuttingDown) == .drop)
        #expect(context.advance { $0.requestComplete() } == .sendAnswer)
        #expect(context.takeAnswer()?.status == 200)
        #expect(context.takeAnswer() == nil)

        let closed = RequestContext(Self.reach("suspended"))
        #expect(closed.advance { $0.connectionClosed() } == .forget)
        #expect(closed.answerArrived(HTTPServer.shuttingDown) == .drop)
        #expect(closed.takeAnswer() == nil)
    }
}
