#include <CLI/CLI.hpp>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/app_flags.h"
#include "cli/command.h"
#include "cli/doctor_checks.h"
#include "cli/json_output.h"
#include "common/printable.h"
#include "common/system_clock.h"

namespace relay::cli {
namespace {

struct DoctorOptions {
  AppFlags flags;
  bool json = false;
};

void runDoctor(const DoctorOptions& options, CommandContext& context) {
  auto config = settingOrUsageError(
      config::loadConfig(config::processEnvironment(), {options.flags.apps, options.flags.runtime},
                         config::defaultConsumerName()),
      "doctor", context);
  if (!config) return;
  SystemClock clock;
  const std::vector<DoctorCheck> checks = runDoctorChecks(*config, clock);
  const bool failed = std::any_of(checks.begin(), checks.end(), [](const DoctorCheck& check) {
    return check.status == DoctorCheck::Status::kFail;
  });
  if (options.json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const DoctorCheck& check : checks) {
      list.push_back({{"name", check.name},
                      {"status", statusName(check.status)},
                      {"detail", check.detail},
                      {"fix", check.fix}});
    }
    const nlohmann::ordered_json out = {
        {"runtime", std::string(config::backendName(config->runtime.backend))},
        {"ok", !failed},
        {"checks", std::move(list)}};
    context.out << prettyJson(out) << "\n";
  } else {
    for (const DoctorCheck& check : checks) {
      std::string status = statusName(check.status);
      for (char& c : status) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      status.resize(6, ' ');
      context.out << status << check.name << ": " << printable(check.detail) << "\n";
      if (!check.fix.empty()) context.out << "      fix: " << printable(check.fix) << "\n";
    }
    const auto failures = std::count_if(checks.begin(), checks.end(), [](const DoctorCheck& c) {
      return c.status == DoctorCheck::Status::kFail;
    });
    context.out << "relay doctor: ";
    if (failures == 0) {
      context.out << "relay start can run the " << config::backendName(config->runtime.backend)
                  << " runtime on this host\n";
    } else {
      context.out << failures << (failures == 1 ? " check" : " checks")
                  << " failed: relay start cannot work here as configured\n";
    }
  }
  if (failed) context.exit_code = kExitFailed;
}

}  // namespace

void addDoctorCommand(CLI::App& root, CommandContext& context) {
  auto options = std::make_shared<DoctorOptions>();
  CLI::App* command = root.add_subcommand(
      "doctor",
      "Check every layer the configured runtime needs on this host, and Redis; each FAIL "
      "names its fix (exit 1 when the runtime cannot work)");
  addAppFlags(*command, options->flags);
  command->add_flag("--json", options->json,
                    "Print one JSON object: runtime, ok, and every check's name, status, detail "
                    "and fix");
  command->callback([options, &context] { runDoctor(*options, context); });
}

}  // namespace relay::cli
