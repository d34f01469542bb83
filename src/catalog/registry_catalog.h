#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "app/registry.h"
#include "catalog/classifier.h"
#include "catalog/message_decoder.h"
#include "catalog/publication_check.h"
#include "invocation/catalog.h"
#include "runtime/runtime.h"

namespace relay::catalog {

/// What the catalog does with an occurrence its own rules cannot admit (docs/schedules.md
/// "Rolling deploys and cron edits"). A fixed internal: tests shorten the hold.
struct OccurrenceChecks {
  /// How long an occurrence of a schedule (or app) this worker does not know is left pending for
  /// a worker that knows it (another version of the template), counted from its publication
  /// (its stream id's time) on this worker's clock; after that it is obsolete.
  std::chrono::milliseconds unknown_hold = std::chrono::hours(1);
  /// Asked whether Relay published an occurrence that is no firing of its schedule's current
  /// cron (it then runs); null: such an occurrence is malformed. Not owned.
  PublicationCheck* published = nullptr;
};

/// The lifecycle's Catalog over the app registry: decoding (malformed, oversized), schedule
/// admission (docs/schedules.md "Consumption") and classification against the current snapshot, and
/// the resolution of planned invocations to runnable specs. An app the registry knows but has no
/// rules for (its template was never valid here, nothing persisted) holds every external event:
/// none can be classified correctly. An occurrence of a schedule this worker does not know is
/// held for a while, and one that is no firing of the current cron runs when Relay published it
/// (OccurrenceChecks). Thread-safe.
class RegistryCatalog final : public invocation::Catalog {
 public:
  /// `group`: the consumer group this worker serves; replay copies for another group are not
  /// its to run (docs/replay.md "Copies"). Empty: every copy.
  RegistryCatalog(const app::Registry& registry, std::size_t max_event_bytes,
                  OccurrenceChecks checks = {}, std::string group = {});

  invocation::Classification classify(const invocation::Message& message, WallTime now) override;
  invocation::Runnable resolve(const invocation::PlannedInvocation& invocation) override;

 private:
  invocation::Classification classifySchedule(const invocation::Message& message, WallTime now);
  /// docs/replay.md "Copies": against the chosen app's rules at the original's publication
  /// time, or (a dead letter) its recorded handler.
  invocation::Classification classifyReplay(const invocation::Message& message,
                                            std::string_view envelope);
  std::shared_ptr<const Classifier> classifier();

  const app::Registry& registry_;
  std::size_t max_event_bytes_;
  OccurrenceChecks checks_;
  std::string group_;
  std::mutex mutex_;
  std::shared_ptr<const Classifier> classifier_;  // of the latest snapshot seen
};

}  // namespace relay::catalog
