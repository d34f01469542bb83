#include "dlq/replayer.h"

#include <chrono>

#include "catalog/invocation_spec.h"

namespace relay::dlq {
namespace {

using Verdict = ReplayResult::Verdict;

ReplayResult result(Verdict verdict, std::string message) {
  return {verdict, std::move(message), std::nullopt};
}

}  // namespace

Replayer::Replayer(const app::Snapshot& snapshot, runtime::Runtime& runtime)
    : snapshot_(snapshot), runtime_(runtime) {}

ReplayResult Replayer::replay(redis::Connection& redis, const std::string& dlq_key,
                              const Entry& entry, runtime::OutputSink& output) const {
  if (auto refused = entry.refusal()) return result(Verdict::kRefused, *refused);
  const std::string app_name(entry.app());
  const std::string handler(entry.handler());
  const app::AppEntry* app_entry = snapshot_.find(app_name);
  if (app_entry == nullptr) {
    return result(Verdict::kNotRunnable, "app \"" + app_name + "\" no longer exists in " +
                                             snapshot_.root().string() + "; the entry stays");
  }
  if (!app_entry->app || !app_entry->errors.empty()) {
    std::string message = "app \"" + app_name + "\" has no valid template now; the entry stays";
    for (const app::Diagnostic& diagnostic : app_entry->errors) {
      message += "\n" + diagnostic.toString();
    }
    return result(Verdict::kNotRunnable, message);
  }
  const app::App& app = *app_entry->app;
  std::optional<std::chrono::milliseconds> timeout;
  if (const app::Rule* rule = app.findRule(handler)) timeout = rule->timeout;
  for (const app::Schedule& schedule : app.schedules) {
    if (!timeout && schedule.handler == handler) timeout = schedule.timeout;
  }
  if (!timeout) {
    return result(Verdict::kNotRunnable, "app \"" + app_name + "\" no longer has a handler \"" +
                                             handler + "\"; the entry stays");
  }
  const runtime::Availability available =
      runtime_.availability(catalog::availabilitySpec(app, handler));
  if (!available.available) {
    return result(Verdict::kNotRunnable, "the " + std::string(runtime_.name()) +
                                             " runtime cannot run " + app_name +
                                             " now: " + available.reason + "; the entry stays");
  }
  const std::string event(entry.event());
  // The original message id keeps RELAY_INVOCATION_ID the idempotency key it was.
  const runtime::InvocationSpec spec = catalog::invocationSpec(
      app, handler, *timeout, std::string(entry.originalId()),
      static_cast<int>(entry.handler_attempts) + 1, runtime::Trigger::kReplay, event);
  const Result<runtime::Outcome> outcome = runtime_.run(spec, output);
  if (!outcome.ok()) {
    return result(Verdict::kNotRunnable, "the " + std::string(runtime_.name()) +
                                             " runtime could not run it: " +
                                             outcome.error().message + "; the entry stays");
  }
  ReplayResult done;
  done.outcome = *outcome;
  const std::string took =
      std::to_string(std::chrono::duration<double>(outcome->duration).count()) + "s";
  const std::string invocation = app_name + "/" + handler;
  if (!outcome->succeeded) {
    done.verdict = Verdict::kFailed;
    done.message = invocation + " failed (" + outcome->reason + ", " + took + "); entry " +
                   entry.id() + " stays in " + dlq_key;
    return done;
  }
  auto removed = redis.command({"XDEL", dlq_key, entry.id()});
  if (!removed.ok()) {
    done.verdict = Verdict::kRemoveFailed;
    done.message = invocation + " succeeded (" + took + ") but removing entry " + entry.id() +
                   " failed: " + removed.error().message;
    return done;
  }
  done.verdict = Verdict::kSucceeded;
  done.message =
      "replayed " + entry.id() + ": " + invocation + " succeeded in " + took + "; " +
      (removed->integer().ok() && *removed->integer() == 1 ? "removed it from " + dlq_key
                                                           : "it was already gone from " + dlq_key);
  return done;
}

}  // namespace relay::dlq
