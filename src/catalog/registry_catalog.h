#pragma once

#include <cstddef>
#include <memory>
#include <mutex>

#include "app/registry.h"
#include "catalog/classifier.h"
#include "catalog/message_decoder.h"
#include "invocation/catalog.h"
#include "runtime/runtime.h"

namespace relay::catalog {

/// The lifecycle's Catalog over the app registry: decoding (malformed, oversized), schedule
/// admission (docs/schedules.md "Consumption") and classification against the current snapshot, and
/// the resolution of planned invocations to runnable specs. An app the registry knows but has no
/// rules for (its template was never valid here, nothing persisted) holds every external event:
/// none can be classified correctly. Thread-safe.
class RegistryCatalog final : public invocation::Catalog {
 public:
  RegistryCatalog(const app::Registry& registry, std::size_t max_event_bytes);

  invocation::Classification classify(const invocation::Message& message, WallTime now) override;
  invocation::Runnable resolve(const invocation::PlannedInvocation& invocation) override;

 private:
  invocation::Classification classifySchedule(const invocation::Message& message);
  std::shared_ptr<const Classifier> classifier();

  const app::Registry& registry_;
  std::size_t max_event_bytes_;
  std::mutex mutex_;
  std::shared_ptr<const Classifier> classifier_;  // of the latest snapshot seen
};

}  // namespace relay::catalog
