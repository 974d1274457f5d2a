import Foundation

extension SocketActor {
    /// Re-resolves the socket's peer names every `interval` on a thread of its own (a lookup
    /// blocks; the socket thread and the async pool must not wait on DNS) and connects the
    /// addresses that appeared, then disconnects those that went away (a replica scaled down or
    /// replaced). Ends when the socket is closed. The number of changes is in
    /// ``SocketStats/discoveryChanges``.
    func startDiscovery(_ discovery: EndpointDiscovery, every interval: Duration, resolved: [String: [String]]) {
        let step = min(interval, .milliseconds(100))
        let thread = Thread { [weak self] in
            var resolved = resolved
            var connected = discovery.flatten(resolved)
            var waited = Duration.zero
            while true {
                Thread.sleep(forTimeInterval: Double(step.components.attoseconds) * 1e-18 + Double(step.components.seconds))
                guard let socket = self, !socket.isClosed else { return }
                waited += step
                guard waited >= interval else { continue }
                waited = .zero
                resolved = discovery.resolved(previous: resolved)
                let wanted = discovery.flatten(resolved)
                let (add, remove) = EndpointDiscovery.changes(from: connected, to: wanted)
                for endpoint in add { socket.connect(endpoint) }
                for endpoint in remove { socket.disconnect(endpoint) }
                if !add.isEmpty || !remove.isEmpty {
                    socket.stats.discoveryChanges.add(add.count + remove.count, ordering: .relaxed)
                }
                connected = wanted
            }
        }
        thread.name = "dns:\(name)"
        thread.start()
    }
}
