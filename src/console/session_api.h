#pragma once

#include "console/console_guard.h"
#include "console/console_state.h"

namespace relay::console {

/// GET /api/session: what the page needs before anything else: whether a login is needed,
/// whether it is read-only, the CSRF token for its POSTs (only to an authenticated page), and
/// what the console is connected to (Redis, stream, group, apps root, runtime).
http::HttpReply session(ConsoleState& state, const ConsoleGuard& guard,
                        const http::HttpRequest& request);
/// POST /api/login {"token": "..."}: starts a session and sets its cookie when the token is
/// right (401 otherwise, 429 once too many logins failed: ConsoleGuard::login)
/// otherwise). Same-origin only, like every POST.
http::HttpReply login(ConsoleGuard& guard, const http::HttpRequest& request);
/// POST /api/logout: ends the session and clears the cookie.
http::HttpReply logout(ConsoleGuard& guard, const http::HttpRequest& request);

}  // namespace relay::console
