import Contracts
import Hummingbird
import Messaging

/// `/v1/auth/*`: sign-up, login, refresh, logout.
enum AuthRoutes {
    static func add(to router: Router<BasicRequestContext>, gateway g: Gateway) {
        router.post("/v1/auth/signup") { request, _ in
            try await g.forward(g.clients.accounts, AccountsMethods.Signup.type, payload: try await HTTPSupport.payload(request),
                                caller: nil, status: .created)
        }
        router.post("/v1/auth/login") { request, _ in
            try await g.forward(g.clients.accounts, AccountsMethods.Login.type, payload: try await HTTPSupport.payload(request), caller: nil)
        }
        router.post("/v1/auth/refresh") { request, _ in
            try await g.forward(g.clients.accounts, AccountsMethods.Refresh.type, payload: try await HTTPSupport.payload(request), caller: nil)
        }
        router.post("/v1/auth/logout") { request, _ in
            let caller = try await g.caller(request)
            return try await g.forward(g.clients.accounts, AccountsMethods.Logout.type, payload: try await HTTPSupport.payload(request),
                                       caller: caller, status: .noContent)
        }
    }
}
