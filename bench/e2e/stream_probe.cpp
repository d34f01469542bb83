#include "e2e/stream_probe.h"

#include <thread>
#include <vector>

#include "bench_stream.h"

namespace relay::bench {

void StreamProbe::fill(long messages, const std::string& event) {
  (void)redis_.command({"DEL", stream_});
  (void)addEvents(redis_, stream_, messages, event, group_);
}

std::string StreamProbe::add(const std::string& event) {
  auto reply = redis_.command({"XADD", stream_, "*", "event", event});
  if (!reply.ok() || !reply->string()) return {};
  return std::string(*reply->string());
}

StreamProbe::Group StreamProbe::group() {
  Group result;
  auto reply = redis_.command({"XINFO", "GROUPS", stream_});
  if (!reply.ok()) return result;
  const auto groups = reply->elements();
  if (!groups) return result;
  for (const auto& group : *groups) {
    auto fields = group.elements();
    if (!fields) continue;
    Group found;
    bool ours = false;
    for (std::size_t i = 0; i + 1 < fields->size(); i += 2) {
      const auto key = (*fields)[i].string();
      if (!key) continue;
      const auto& value = (*fields)[i + 1];
      if (*key == "name") ours = value.string() && *value.string() == group_;
      if (*key == "entries-read" && value.integer()) found.entries_read = *value.integer();
      if (*key == "pending" && value.integer()) found.pending = *value.integer();
    }
    if (ours) return found;
  }
  return result;
}

bool StreamProbe::hasConsumer(const std::string& consumer) {
  // Redis 7.0 creates a consumer only when it first receives a message; a reader blocked on
  // an empty stream shows in CLIENT LIST instead.
  if (auto clients = redis_.command({"CLIENT", "LIST"});
      clients.ok() && clients->string() &&
      clients->string()->find("cmd=xreadgroup") != std::string::npos) {
    return true;
  }
  auto reply = redis_.command({"XINFO", "CONSUMERS", stream_, group_});
  if (!reply.ok()) return false;
  const auto consumers = reply->elements();
  if (!consumers) return false;
  for (const auto& entry : *consumers) {
    auto fields = entry.elements();
    if (!fields) continue;
    for (std::size_t i = 0; i + 1 < fields->size(); i += 2) {
      const auto key = (*fields)[i].string();
      const auto value = (*fields)[i + 1].string();
      if (key && *key == "name" && value && *value == consumer) return true;
    }
  }
  return false;
}

int StreamProbe::blockedReaders() {
  auto clients = redis_.command({"CLIENT", "LIST"});
  if (!clients.ok() || !clients->string()) return 0;
  const std::string_view list = *clients->string();
  int readers = 0;
  for (std::size_t at = list.find("cmd=xreadgroup"); at != std::string_view::npos;
       at = list.find("cmd=xreadgroup", at + 1)) {
    ++readers;
  }
  return readers;
}

StreamProbe::Drain StreamProbe::drain(long total, std::chrono::seconds limit,
                                      const std::function<bool()>& alive,
                                      const std::function<void(bool at_start)>& window, bool read) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + limit;
  const long low = total / 10;
  const long high = total - total / 10;
  Clock::time_point window_start{};
  long long start_acked = -1;
  Drain drain;
  const auto done = [&](const Group& now) { return read ? now.entries_read : now.acked(); };
  while (Clock::now() < deadline && alive()) {
    const Group now = group();
    const auto at = Clock::now();
    if (start_acked < 0 && done(now) >= low) {
      start_acked = done(now);
      window_start = at;
      window(true);
    }
    if (start_acked >= 0 && done(now) >= high) {
      window(false);
      drain.messages = static_cast<long>(done(now) - start_acked);
      const double seconds = std::chrono::duration<double>(at - window_start).count();
      drain.rate = seconds > 0 ? static_cast<double>(drain.messages) / seconds : 0;
      drain.complete = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // Let the tail finish so the next case starts on a quiet machine.
  while (drain.complete && Clock::now() < deadline && alive() && done(group()) < total) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return drain;
}

}  // namespace relay::bench
