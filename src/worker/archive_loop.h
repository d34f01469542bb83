#pragma once

#include <memory>

#include "history/archiver.h"
#include "observability/logger.h"
#include "worker/redis_chore.h"

namespace relay::worker {

/// The worker's archiver thread (`relay-archiver`, docs/replay.md "Archive"): a pass of the
/// history::Archiver every ArchiverSettings::interval on its own connection; a pass that fails
/// is logged and tried again next interval (the cursor has not moved). The stop gives the lease
/// up so another worker takes over at once.
class ArchiveLoop {
 public:
  ArchiveLoop(std::unique_ptr<history::Archiver> archiver, redis::Endpoint endpoint,
              observability::Metrics& metrics, observability::Logger& logger, Clock& clock);
  ~ArchiveLoop();
  ArchiveLoop(const ArchiveLoop&) = delete;
  ArchiveLoop& operator=(const ArchiveLoop&) = delete;

  void start();
  void stop();

 private:
  std::unique_ptr<history::Archiver> archiver_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  bool failing_ = false;  // the chore's thread only: a failure is logged once per streak
  RedisChore chore_;      // last: its thread ends before the members it uses
};

}  // namespace relay::worker
