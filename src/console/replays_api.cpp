#include "console/replays_api.h"

#include "history/replay_json.h"
#include "history/replay_record.h"

namespace relay::console {

http::HttpReply replays(ConsoleState& state, const http::HttpRequest&) {
  auto lease = state.pool.lease();
  if (!lease.ok()) return redisFailure("connect", lease.error());
  auto listed = history::listReplays(**lease, state.keys);
  if (!listed.ok()) return redisFailure("replays", listed.error());
  Json list = Json::array();
  long long running = 0;
  for (const history::ReplayStatus& replay : *listed) {
    running += replay.state == "running";
    list.push_back(history::replayJson(replay));
  }
  return jsonReply({{"running", running}, {"replays", std::move(list)}});
}

}  // namespace relay::console
