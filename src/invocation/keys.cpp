#include "invocation/keys.h"

namespace relay::invocation {

std::string StreamKeys::prefix() const { return "relay:" + stream + ":"; }

std::string StreamKeys::state(std::string_view message_id) const {
  return prefix() + "inv:" + group + ":" + std::string(message_id);
}

std::string StreamKeys::dlq() const { return prefix() + "dlq"; }

std::string StreamKeys::stats() const { return prefix() + "stats"; }

std::string StreamKeys::due() const { return prefix() + "due:" + group; }

std::string StreamKeys::appTemplate(std::string_view app) const {
  // An app name holds no ':', so the last segment is the app whatever the group's name.
  return prefix() + "apps:" + group + ":" + std::string(app);
}

std::string StreamKeys::legacyAppTemplate(std::string_view app) const {
  return prefix() + "apps:" + std::string(app);
}

std::string StreamKeys::paused() const { return prefix() + "paused:" + group; }

std::string StreamKeys::legacyPaused() const { return prefix() + "paused"; }

std::string StreamKeys::pausedQueue() const { return prefix() + "paused-queue:" + group; }

std::string StreamKeys::clock() const { return prefix() + "clock:" + group; }

std::string StreamKeys::minute(std::int64_t unix_minute) const {
  return prefix() + "minute:" + std::to_string(unix_minute);
}

std::string StreamKeys::heartbeat(std::string_view consumer) const {
  return prefix() + "worker:" + group + ":" + std::string(consumer);
}

std::string StreamKeys::attempts(std::string_view message_id) const {
  return prefix() + "attempts:" + group + ":" + std::string(message_id);
}

std::string StreamKeys::groupRecord() const { return prefix() + "group:" + group; }
std::string StreamKeys::flow(std::string_view kind, std::string_view scope,
                             std::string_view value) const {
  std::string name =
      prefix() + "flow:" + group + ":" + std::string(kind) + ":" + std::string(scope);
  if (!value.empty()) name += ":" + std::string(value);
  return name;
}

std::string StreamKeys::cancels() const { return prefix() + "cancels:" + group; }

std::string StreamKeys::replays() const { return prefix() + "replays:" + group; }

std::string StreamKeys::replay(std::string_view id) const {
  return prefix() + "replay:" + group + ":" + std::string(id);
}

std::string StreamKeys::replayCopies(std::string_view id) const {
  return prefix() + "replay-copies:" + group + ":" + std::string(id);
}

std::string StreamKeys::archive() const { return prefix() + "archive:" + group; }

std::string StreamKeys::appArchive(std::string_view app) const {
  return prefix() + "archive:" + group + ":" + std::string(app);
}

std::string StreamKeys::archiver() const { return prefix() + "archiver:" + group; }

std::string StreamKeys::retention() const { return prefix() + "retention"; }

std::string invocationField(std::string_view app, std::string_view handler) {
  return std::string(app) + "/" + std::string(handler);
}

}  // namespace relay::invocation
