#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "catalog/schedule_publisher.h"
#include "common/rfc3339.h"
#include "integration/stream/pipeline_fixture.h"
#include "schedule/occurrence.h"

namespace relay::stream::testing {

/// App `reports`: an every-minute `tick`, a `nightly` at 03:00 Europe/Berlin (01:00Z in May)
/// with a payload and one retry, and a `monthly` on the 1st; plus an event rule that would
/// match any occurrence payload if occurrences were ever classified like events.
inline constexpr const char* kReports = R"(runtime: exec
events:
  - handler: bin/on-event.sh
    pattern: {source: [relay.schedule]}
schedules:
  - name: tick
    cron: "* * * * *"
    handler: bin/tick.sh
  - name: nightly
    cron: "0 3 * * *"
    timezone: Europe/Berlin
    handler: bin/nightly.sh
    retries: 1
    payload: {kind: nightly, n: 1}
  - name: monthly
    cron: "0 0 1 * *"
    handler: bin/monthly.sh
)";

inline const std::vector<std::string> kReportsHandlers = {"bin/on-event.sh", "bin/tick.sh",
                                                          "bin/nightly.sh", "bin/monthly.sh"};

inline WallTime at(std::string_view rfc3339) {
  const auto instant = parseRfc3339(rfc3339);
  EXPECT_TRUE(instant.has_value()) << rfc3339;
  return WallTime{std::chrono::seconds(instant ? instant->seconds : 0)};
}

/// The pipeline fixture plus schedule publishers on the same Redis, registry and FakeClock.
class ScheduleTest : public PipelineTest {
 protected:
  std::unique_ptr<catalog::SchedulePublisher> publisher() {
    catalog::PublisherSettings settings;
    settings.stream = "events";
    settings.reconnect_min = std::chrono::milliseconds(1);
    settings.reconnect_max = std::chrono::milliseconds(10);
    return std::make_unique<catalog::SchedulePublisher>(settings, server().endpoint(), *registry_,
                                                        metrics_, logger_, clock_);
  }

  /// Every schedule occurrence in the stream, as `<schedule>@<scheduled_at>`, in stream order.
  std::vector<std::string> occurrences() {
    std::vector<std::string> found;
    auto range = redis_->command({"XRANGE", "events", "-", "+"});
    EXPECT_TRUE(range.ok());
    if (!range.ok()) return found;
    auto entries = parseEntries(range->view());
    EXPECT_TRUE(entries.ok());
    for (const StreamEntry& entry : *entries) {
      const std::string* envelope = entry.find(schedule::kEnvelopeField);
      if (envelope == nullptr) continue;
      auto occurrence = schedule::parseEnvelope(*envelope);
      EXPECT_TRUE(occurrence.ok()) << *envelope;
      if (occurrence.ok()) {
        found.push_back(occurrence->schedule + "@" + occurrence->scheduledAtText());
      }
    }
    return found;
  }

  /// A second worker on the same stream and group whose apps root holds another version of the
  /// apps (a rolling deploy): its own registry, catalog and lifecycle; the runtime, the Redis
  /// server and the clock are shared.
  struct OtherVersion {
    relay::testing::TempDir apps;
    std::unique_ptr<app::Registry> registry;
    std::unique_ptr<catalog::RegistryCatalog> catalog;
    std::unique_ptr<invocation::Lifecycle> lifecycle;
    std::unique_ptr<invocation::RedisLifecycleStore> store;

    /// Processes message `id` as this worker would after reading or reclaiming it.
    invocation::Delivery process(const StreamEntry& entry) {
      const std::atomic<bool> stopping{false};
      return lifecycle->process(*store, entry, stopping);
    }
  };
  std::unique_ptr<OtherVersion> otherVersion(const std::string& app, const std::string& yaml,
                                             const std::vector<std::string>& handlers) {
    auto other = std::make_unique<OtherVersion>();
    other->apps.write(app + "/template.yaml", yaml);
    for (const std::string& handler : handlers) {
      other->apps.write(app + "/" + handler, "#!/bin/sh\nexit 0\n", 0755);
    }
    auto registry = app::Registry::create({other->apps.path(), {}, {}});
    EXPECT_TRUE(registry.ok()) << registry.error().message;
    if (!registry.ok()) return other;
    other->registry = std::move(registry).value();
    other->catalog = makeCatalog(*other->registry);
    other->lifecycle = replicaLifecycle("worker-2", nullptr, other->catalog.get());
    other->store = newStore("worker-2");
    return other;
  }
  /// A publisher of the other version's schedules.
  std::unique_ptr<catalog::SchedulePublisher> publisherOf(const OtherVersion& other) {
    catalog::PublisherSettings settings;
    settings.stream = "events";
    return std::make_unique<catalog::SchedulePublisher>(settings, server().endpoint(),
                                                        *other.registry, metrics_, logger_, clock_);
  }

  /// XADDs an occurrence message as the publisher would, with `payload_json` as the template
  /// payload; returns its id.
  std::string xaddOccurrence(const schedule::Occurrence& occurrence,
                             const std::string& payload_json = "{}") {
    return xaddFields({std::string(schedule::kEnvelopeField), occurrence.envelope(), "event",
                       occurrence.payload(payload_json)});
  }
};

}  // namespace relay::stream::testing
