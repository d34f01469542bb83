#include "console/session_api.h"

#include "config/runtime_factory.h"
#include "console/request_body.h"

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

HttpReply login(ConsoleGuard& guard, const HttpRequest& request) {
  if (!guard.tokenRequired()) return jsonReply({{"authenticated", true}});
  auto body = decodeBody(request.body);
  const bool shaped = body.ok() && body->contains("token") && (*body)["token"].is_string();
  auto session = guard.login(request, shaped ? (*body)["token"].get<std::string>() : "");
  if (auto* refused = std::get_if<HttpReply>(&session)) return *refused;
  HttpReply reply = jsonReply({{"authenticated", true}});
  reply.headers.emplace_back("Set-Cookie", std::get<std::string>(session));
  return reply;
}

HttpReply logout(ConsoleGuard& guard, const HttpRequest& request) {
  HttpReply reply = jsonReply({{"authenticated", false}});
  reply.headers.emplace_back("Set-Cookie", guard.logout(request));
  return reply;
}

}  // namespace relay::console
