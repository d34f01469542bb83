#include "runtime/docker/container_reaper.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "common/whole_number.h"
#include "runtime/image/sha256.h"

namespace relay::runtime::docker {
namespace {

struct Owner {
  std::string host;
  pid_t pid = 0;
};

// `<host>/<pid>/<start>`; nullopt for a label that Relay did not write.
std::optional<Owner> parseOwner(std::string_view label) {
  const std::size_t last = label.rfind('/');
  if (last == std::string_view::npos || last == 0) return std::nullopt;
  const std::size_t middle = label.rfind('/', last - 1);
  if (middle == std::string_view::npos) return std::nullopt;
  const std::string_view pid_text = label.substr(middle + 1, last - middle - 1);
  Owner owner{std::string(label.substr(0, middle)), 0};
  if (!parseWholeNumber(pid_text, owner.pid) || owner.pid <= 0) return std::nullopt;
  return owner;
}

std::optional<std::int64_t> parseMillis(std::string_view text) {
  std::int64_t value = 0;
  if (!parseWholeNumber(text, value)) return std::nullopt;
  return value;
}

bool processExists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

std::string deadlineLabel(WallTime deadline) { return std::to_string(unixMillis(deadline)); }

std::string invocationNamePrefix(std::string_view invocation_id) {
  // `sha256:` and 32 of its 64 digits: a container name allows no '/' or ':'.
  return "relay-inv-" + image::sha256Digest(invocation_id).substr(7, 32) + "-";
}

ContainerReaper::ContainerReaper(const DockerApi& api, Clock& clock, std::string owner,
                                 std::string hostname, std::function<void(std::string_view)> warn)
    : api_(api),
      clock_(clock),
      owner_(std::move(owner)),
      hostname_(std::move(hostname)),
      warn_(std::move(warn)) {}

Result<std::size_t> ContainerReaper::reapStale() { return reap(/*dead_owners=*/true); }

Result<std::size_t> ContainerReaper::reapExpired() { return reap(/*dead_owners=*/false); }

void ContainerReaper::reapExpiredEvery(std::chrono::milliseconds interval) {
  const std::int64_t now = clock_.monotonicNow().time_since_epoch().count();
  std::int64_t due = next_expired_reap_ns_.load();
  const std::int64_t next = now + std::chrono::nanoseconds(interval).count();
  // One caller per interval runs it; the others carry on at once.
  if (now < due || !next_expired_reap_ns_.compare_exchange_strong(due, next)) return;
  auto reaped = reapExpired();
  if (!reaped) {
    warn_("could not look for containers past their deadline: " + reaped.error().message);
  } else if (*reaped > 0) {
    warn_("removed " + std::to_string(*reaped) + " containers past their deadline");
  }
}

Result<std::size_t> ContainerReaper::reap(bool dead_owners) {
  auto containers = api_.listContainers(kOwnerLabel);
  if (!containers) return containers.error();
  const std::int64_t now = unixMillis(clock_.now());
  std::vector<std::string> ids;
  for (const ContainerSummary& container : *containers) {
    const auto label = container.labels.find(std::string(kOwnerLabel));
    if (label == container.labels.end()) continue;
    const auto deadline_label = container.labels.find(std::string(kDeadlineLabel));
    const auto deadline = deadline_label == container.labels.end()
                              ? std::nullopt
                              : parseMillis(deadline_label->second);
    bool stale = deadline && *deadline < now;
    if (!stale && dead_owners && label->second != owner_) {
      const auto owner = parseOwner(label->second);
      // Another host's Relay is not ours to judge. Our own pid with another start time is an
      // earlier incarnation (PID 1 in a restarted container); another live pid may be a
      // second Relay on this host.
      stale = owner && owner->host == hostname_ &&
              (owner->pid == ::getpid() || !processExists(owner->pid));
    }
    if (stale) ids.push_back(container.id);
  }
  return removeAll(ids);
}

Result<std::size_t> ContainerReaper::reapInvocation(std::string_view invocation_id) {
  auto labelled =
      api_.listContainers(std::string(kInvocationLabel) + "=" + std::string(invocation_id));
  if (!labelled) return labelled.error();
  const std::string prefix = invocationNamePrefix(invocation_id);
  auto named = api_.listContainersNamed(prefix);
  if (!named) return named.error();
  std::vector<std::string> ids;
  for (const ContainerSummary& container : *labelled) ids.push_back(container.id);
  for (const ContainerSummary& container : *named) {
    // The daemon's filter matches anywhere in the name; only the prefix counts.
    const bool ours = std::any_of(
        container.names.begin(), container.names.end(),
        [&prefix](const std::string& name) { return name.rfind("/" + prefix, 0) == 0; });
    if (ours && std::find(ids.begin(), ids.end(), container.id) == ids.end()) {
      ids.push_back(container.id);
    }
  }
  auto removed = removeAll(ids);
  if (!removed) {
    Error error = removed.error();
    error.message =
        "an earlier attempt of " + std::string(invocation_id) + " may still run: " + error.message;
    return error;
  }
  return removed;
}

Result<std::size_t> ContainerReaper::removeAll(const std::vector<std::string>& ids) {
  std::size_t removed = 0;
  std::optional<Error> first_error;
  for (const std::string& id : ids) {
    if (auto status = api_.remove(id); !status) {
      warn_("could not reap stale container " + id + ": " + status.error().message);
      if (!first_error) first_error = status.error();
      continue;
    }
    ++removed;
  }
  if (first_error) return *first_error;
  return removed;
}

}  // namespace relay::runtime::docker
