#pragma once

#include <istream>
#include <string>

#include "cli/command.h"

namespace relay::cli {

/// `relay dlq replay --app A [--handler H] [--reason R] ...`: the console's Dead letters filter
/// (the same parameters, read by the console's own parser), `--since`/`--until` also as a
/// duration back from now (docs/replay.md "Dead letters").
struct DlqBulkFlags {
  std::string app;
  std::string handler;
  std::string kind;
  std::string reason;
  std::string text;  // --q
  std::string since;
  std::string until;
  std::string rate;
  bool yes = false;
  bool json = false;
  bool detach = false;

  bool any() const {
    return !app.empty() || !handler.empty() || !kind.empty() || !reason.empty() || !text.empty() ||
           !since.empty() || !until.empty();
  }
};

/// States how many entries the filter selects, asks for a yes on `answers` unless `--yes`,
/// then creates a replay of source `dlq` the workers drive: each selected entry is published
/// again as a copy that runs its recorded handler (a copy that fails is dead-lettered again,
/// marked as a replay), and leaves the dead-letter queue when its copy is published.
void runDlqBulkReplay(const DlqBulkFlags& flags, std::istream& answers, CommandContext& context);

}  // namespace relay::cli
