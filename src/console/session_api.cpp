#include "console/session_api.h"

#include "config/runtime_factory.h"

namespace relay::console {

using http::HttpReply;
using http::HttpRequest;

HttpReply session(ConsoleState& state, const ConsoleGuard& guard, const HttpRequest& request) {
  const bool authenticated = guard.authenticated(request);
  Json out = {{"authenticated", authenticated},
              {"token_required", guard.tokenRequired()},
              {"read_only", state.config.read_only}};
  if (authenticated) {
    if (!state.config.read_only) out["csrf"] = guard.csrf();
    out["redis"] = state.config.worker.redis.describe();
    out["stream"] = state.keys.stream;
    out["group"] = state.keys.group;
    out["apps"] = state.config.worker.apps.string();
    out["runtime"] = config::backendName(state.config.worker.runtime.backend);
  }
  return jsonReply(out);
}

HttpReply login(const ConsoleGuard& guard, const HttpRequest& request) {
  if (!guard.tokenRequired()) return jsonReply({{"authenticated", true}});
  const Json body = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("token") || !body["token"].is_string() ||
      !guard.tokenMatches(body["token"].get<std::string>())) {
    return jsonError(401, "wrong token");
  }
  HttpReply reply = jsonReply({{"authenticated", true}});
  reply.headers.emplace_back("Set-Cookie", guard.sessionCookie());
  return reply;
}

HttpReply logout(const ConsoleGuard&, const HttpRequest&) {
  HttpReply reply = jsonReply({{"authenticated", false}});
  reply.headers.emplace_back("Set-Cookie",
                             "relay_console=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
  return reply;
}

}  // namespace relay::console
