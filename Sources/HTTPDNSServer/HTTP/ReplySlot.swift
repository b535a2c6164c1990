import Synchronization

/// Meets a response produced on one thread with the responder of a suspended connection handed
/// over on another: whichever arrives second sends the response, outside the lock, once.
final class ReplySlot: Sendable {
    private struct State: Sendable {
        var response: HTTPResponse?
        var responder: (@Sendable (consuming HTTPResponse) -> Void)?
        var sent = false
    }

    private let state = Mutex(State())

    /// Sends `response` when a responder waits for it, else keeps it for the one to come. Not
    /// kept when sent at once: a kept copy retains every string and array of the response.
    func set(_ response: consuming HTTPResponse) {
        var response = Optional(response)
        let responder = state.withLock { state -> (@Sendable (consuming HTTPResponse) -> Void)? in
            guard !state.sent, let responder = state.responder else {
                state.response = response.take()
                return nil
            }
            state.sent = true
            return responder
        }
        if let responder, let response = response.take() { responder(response) }
    }

    func attach(_ responder: @escaping @Sendable (consuming HTTPResponse) -> Void) {
        let ready = state.withLock { state -> HTTPResponse? in
            state.responder = responder
            return takeIfReady(&state) != nil ? state.response.take() : nil
        }
        if let ready { responder(ready) }
    }

    private func takeIfReady(_ state: inout State) -> (@Sendable (consuming HTTPResponse) -> Void)? {
        guard !state.sent, state.response != nil, let responder = state.responder else { return nil }
        state.sent = true
        return responder
    }

    /// The response at once when it is already there (every answer came from the cache), else a
    /// deferred result that sends it when it is set.
    var result: HandlerResult {
        let ready = state.withLock { state -> HTTPResponse? in
            guard !state.sent, state.responder == nil, state.response != nil else { return nil }
            state.sent = true
            return state.response.take()
        }
        if let ready { return .response(ready) }
        return .deferred { self.attach($0) }
    }
}
