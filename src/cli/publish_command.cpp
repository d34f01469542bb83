// `relay publish`: appends events to the stream after the consumer's own checks (docs/cli.md).
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "catalog/message_decoder.h"
#include "cli/command.h"
#include "cli/loaded_apps.h"
#include "cli/redis_session.h"
#include "tracing/trace_context.h"

namespace relay::cli {
namespace {

constexpr const char* kPublishName = "relay publish";

struct PublishOptions {
  std::string event;  // JSON or @FILE; empty: stdin
  bool lines = false;
  std::string traceparent;
  std::string tracestate;
};

/// One event value cut from the input, with where it starts (for error messages).
struct Piece {
  std::string text;
  std::size_t line = 0;   // 1-based; 0 without --lines
  std::size_t start = 0;  // byte offset of the piece in the input
};

bool blank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// The whole input as one event (trailing whitespace dropped, so a file's final newline is not
// part of the event), or one event per non-blank line (a trailing '\r' dropped).
std::vector<Piece> cut(const std::string& input, bool lines) {
  std::vector<Piece> pieces;
  if (!lines) {
    const std::size_t end = input.find_last_not_of(" \t\r\n");
    pieces.push_back({input.substr(0, end == std::string::npos ? 0 : end + 1), 0, 0});
    return pieces;
  }
  std::size_t start = 0;
  for (std::size_t line = 1; start < input.size(); ++line) {
    std::size_t end = input.find('\n', start);
    if (end == std::string::npos) end = input.size();
    std::string_view text(input.data() + start, end - start);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (!blank(text)) pieces.push_back({std::string(text), line, start});
    start = end + 1;
  }
  return pieces;
}

void reportRejection(const Piece& piece, const catalog::EventRejection& rejection,
                     CommandContext& context) {
  context.err << kPublishName << ": ";
  if (piece.line > 0) {
    context.err << "line " << piece.line << ", byte " << rejection.offset << " (byte "
                << piece.start + rejection.offset << " of the input): ";
  } else {
    context.err << "byte " << rejection.offset << ": ";
  }
  context.err << (rejection.json_syntax ? "invalid JSON: " : "") << rejection.message << "\n";
}

std::vector<std::string> xadd(const std::string& stream, const std::string& event,
                              const PublishOptions& options) {
  std::vector<std::string> command = {"XADD", stream, "*", "event", event};
  if (!options.traceparent.empty()) {
    command.insert(command.end(), {"traceparent", options.traceparent});
  }
  if (!options.tracestate.empty()) {
    command.insert(command.end(), {"tracestate", options.tracestate});
  }
  return command;
}

// Appends every event in one round trip: MULTI/EXEC, so that a refused command (OOM, wrong key
// type) appends none of them. Returns the ids, or nullopt with the error reported.
std::optional<std::vector<std::string>> append(RedisSession& session,
                                               const std::vector<Piece>& pieces,
                                               const PublishOptions& options,
                                               CommandContext& context) {
  std::vector<std::vector<std::string>> commands;
  const bool transaction = pieces.size() > 1;
  if (transaction) commands.push_back({"MULTI"});
  for (const Piece& piece : pieces) {
    commands.push_back(xadd(session.config.stream, piece.text, options));
  }
  if (transaction) commands.push_back({"EXEC"});
  auto replies = session.redis->pipeline(commands);
  if (!replies.ok()) {
    reportRedisError("publish", replies.error(), context);
    return std::nullopt;
  }
  const redis::Result<redis::Reply>& last = replies->back();
  if (!last.ok()) {
    reportRedisError("publish", last.error(), context);
    return std::nullopt;
  }
  std::vector<std::string> ids;
  const auto take = [&](redis::ReplyView reply) {
    if (reply.isError()) {
      reportRedisError("publish", reply.toError(), context);
      return false;
    }
    auto id = reply.string();
    if (!id.ok()) {
      reportRedisError("publish", id.error(), context);
      return false;
    }
    ids.emplace_back(*id);
    return true;
  };
  if (!transaction) {
    if (!take(last->view())) return std::nullopt;
    return ids;
  }
  auto results = last->elements();
  if (!results.ok()) {
    reportRedisError("publish", results.error(), context);
    return std::nullopt;
  }
  for (const redis::ReplyView reply : *results) {
    if (!take(reply)) return std::nullopt;
  }
  return ids;
}

void runPublish(const PublishOptions& options, std::istream& in, CommandContext& context) {
  context.exit_code = kExitUsage;
  if (!options.traceparent.empty()) {
    if (auto parsed = tracing::parseTraceparent(options.traceparent); !parsed.ok()) {
      context.err << kPublishName << ": --traceparent: " << parsed.error().message << "\n";
      return;
    }
  }
  if (!options.tracestate.empty()) {
    if (options.traceparent.empty()) {
      context.err << kPublishName << ": --tracestate needs --traceparent\n";
      return;
    }
    if (auto checked = tracing::checkTracestate(options.tracestate); !checked.ok()) {
      context.err << kPublishName << ": --tracestate: " << checked.error().message << "\n";
      return;
    }
  }
  std::optional<config::WorkerConfig> config = loadCommandConfig("publish", {}, context);
  if (!config) return;
  Result<std::string> input = readEventArgument(options.event, in);
  if (!input.ok()) {
    context.err << kPublishName << ": " << input.error().message << "\n";
    return;
  }
  const std::vector<Piece> pieces = cut(*input, options.lines);
  if (options.lines && pieces.empty()) {
    context.err << kPublishName << ": no event in the input (every line is blank)\n";
    return;
  }
  // Every event is checked before anything is appended: one bad line appends nothing.
  bool valid = true;
  for (const Piece& piece : pieces) {
    auto checked = catalog::checkEventValue(piece.text, config->max_event_bytes);
    if (!checked.ok()) {
      reportRejection(piece, checked.error(), context);
      valid = false;
    }
  }
  if (!valid) {
    context.err << kPublishName << ": nothing was appended\n";
    return;
  }
  std::optional<RedisSession> session = connectRedisSession("publish", std::move(*config), context);
  if (!session) return;
  const std::optional<std::vector<std::string>> ids = append(*session, pieces, options, context);
  if (!ids) return;
  for (const std::string& id : *ids) context.out << id << "\n";
  context.exit_code = kExitOk;
}

}  // namespace

void addPublishCommand(CLI::App& root, CommandContext& context) {
  auto options = std::make_shared<PublishOptions>();
  CLI::App* publish = root.add_subcommand(
      "publish",
      "Append an event to the stream (REDIS_STREAM) after the checks the worker applies, and "
      "print its message id");
  publish->add_option("--event", options->event,
                      "The event JSON, or @FILE (@- for stdin); default: stdin");
  publish->add_flag("--lines", options->lines,
                    "One event per line (blank lines skipped); all are checked first, then "
                    "appended atomically");
  publish->add_option("--traceparent", options->traceparent,
                      "W3C traceparent to store next to the event (00-<trace>-<span>-<flags>)");
  publish->add_option("--tracestate", options->tracestate,
                      "W3C tracestate to store with --traceparent");
  publish->callback([options, &context] { runPublish(*options, std::cin, context); });
}

}  // namespace relay::cli
