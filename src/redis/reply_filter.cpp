#include "redis/reply_filter.h"

#include <algorithm>
#include <charconv>
#include <string>

namespace relay::redis {
namespace {

// Header lines (`$<length>`, `*<count>`) are short; a longer one is not RESP2.
constexpr std::size_t kMaxHeader = 32;

// The count of a header line (without its `\n`), or nullopt unless the line is canonical RESP2:
// digits as a server writes them, then `\r`. Anything else is handed on untouched (the filter
// re-emits the headers it parses, so it must only parse what it would write the same way).
std::optional<std::int64_t> parseCount(std::string_view line) {
  if (line.empty() || line.back() != '\r') return std::nullopt;
  line.remove_suffix(1);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
  if (line.empty() || ec != std::errc() || end != line.data() + line.size() || value < -1 ||
      std::to_string(value) != line) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

void ReplyFilter::expect(std::optional<ReplyLimits> limits) { queue_.push_back(limits); }

void ReplyFilter::beginReply() {
  in_reply_ = true;
  limits_.reset();
  if (!queue_.empty()) {
    limits_ = queue_.front();
    queue_.pop_front();
  }
}

void ReplyFilter::feed(std::string_view input, std::string& out) {
  std::size_t at = 0;
  while (at < input.size()) {
    switch (state_) {
      case State::kConfused:
        out.append(input.substr(at));
        return;
      case State::kType: {
        if (!in_reply_) beginReply();
        type_ = input[at++];
        line_.clear();
        if (type_ == '+' || type_ == '-' || type_ == ':') {
          emit(out, std::string_view(&type_, 1));
          line_last_ = 0;
          state_ = State::kLine;
        } else if (type_ == '$' || type_ == '*') {
          state_ = State::kHeader;
        } else {
          // Not RESP2 (or out of step): hand everything on, hiredict's reader decides.
          state_ = State::kConfused;
          out.push_back(type_);
        }
        break;
      }
      case State::kLine: {
        // A status, error or integer line: passed as it is. It ends at `\r\n`; a `\n` alone is
        // not RESP2 (hiredict would read on), and the rest is handed on untouched.
        const std::size_t newline = input.find('\n', at);
        const std::size_t end = newline == std::string_view::npos ? input.size() : newline;
        emit(out, input.substr(at, end - at));
        if (end > at) line_last_ = input[end - 1];
        at = end;
        if (newline == std::string_view::npos) break;
        if (line_last_ != '\r') {
          state_ = State::kConfused;
          break;
        }
        emit(out, "\n");
        ++at;
        line_last_ = 0;
        state_ = State::kType;
        elementDone(out);
        break;
      }
      case State::kHeader: {
        const std::size_t newline = input.find('\n', at);
        const std::size_t end = newline == std::string_view::npos ? input.size() : newline;
        line_.append(input.substr(at, end - at));
        at = end;
        if (line_.size() > kMaxHeader) {
          state_ = State::kConfused;
          out.push_back(type_);
          out.append(line_);
          break;
        }
        if (newline == std::string_view::npos) break;
        ++at;  // the newline
        header(line_, out);
        break;
      }
      case State::kBulk: {
        if (pass_ > 0) {
          const auto take =
              static_cast<std::size_t>(std::min<std::uint64_t>(pass_, input.size() - at));
          emit(out, input.substr(at, take));
          at += take;
          pass_ -= take;
          if (pass_ == 0 && cut_length_) emit(out, "\r\n");  // the kept bytes end here
        } else {
          const auto take =
              static_cast<std::size_t>(std::min<std::uint64_t>(skip_, input.size() - at));
          at += take;
          skip_ -= take;
        }
        if (pass_ == 0 && skip_ == 0) {
          if (cut_length_) emit(out, ":" + std::to_string(*cut_length_) + "\r\n");
          cut_length_.reset();
          state_ = State::kType;
          elementDone(out);
        }
        break;
      }
    }
  }
}

void ReplyFilter::header(std::string_view line, std::string& out) {
  const std::optional<std::int64_t> count = parseCount(line);
  if (!count) {
    state_ = State::kConfused;
    out.push_back(type_);
    out.append(line);
    out.push_back('\n');
    return;
  }
  if (type_ == '$') {
    if (*count < 0) {
      emit(out, "$-1\r\n");
      state_ = State::kType;
      elementDone(out);
      return;
    }
    startBulk(static_cast<std::uint64_t>(*count), out);
    return;
  }
  state_ = State::kType;
  if (*count <= 0) {
    emit(out, *count < 0 ? "*-1\r\n" : "*0\r\n");
    elementDone(out);
    return;
  }
  Frame frame;
  frame.total = static_cast<std::uint64_t>(*count);
  frame.kept = frame.total;
  if (limits_ && !dropping() && frame.total > limits_->max_elements) {
    frame.cut = true;
    frame.kept = limits_->max_elements;
  }
  emit(out, "*" + std::to_string(frame.cut ? frame.kept + 1 : frame.total) + "\r\n");
  stack_.push_back(frame);
  if (frame.cut && frame.kept == 0) drop_from_ = static_cast<long>(stack_.size()) - 1;
}

void ReplyFilter::startBulk(std::uint64_t length, std::string& out) {
  state_ = State::kBulk;
  cut_length_.reset();
  if (dropping()) {
    pass_ = 0;
    skip_ = length + 2;
    return;
  }
  Frame* parent = stack_.empty() ? nullptr : &stack_.back();
  if (limits_) {
    const std::size_t spent = parent ? parent->bytes : 0;
    const std::size_t left =
        limits_->max_array_bytes > spent ? limits_->max_array_bytes - spent : 0;
    if (length > limits_->max_bulk || length > left) {
      const std::uint64_t kept = std::min<std::uint64_t>({length, limits_->kept, left});
      if (parent) parent->bytes += static_cast<std::size_t>(kept);
      out.append("*2\r\n$" + std::to_string(kept) + "\r\n");
      cut_length_ = length;
      pass_ = kept;
      skip_ = length - kept + 2;
      if (kept == 0) out.append("\r\n");
      return;
    }
    if (parent) parent->bytes += static_cast<std::size_t>(length);
  }
  out.append("$" + std::to_string(length) + "\r\n");
  pass_ = length + 2;
  skip_ = 0;
}

void ReplyFilter::elementDone(std::string& out) {
  while (true) {
    if (stack_.empty()) {
      in_reply_ = false;
      limits_.reset();
      return;
    }
    Frame& top = stack_.back();
    ++top.seen;
    const long index = static_cast<long>(stack_.size()) - 1;
    if (top.cut && top.seen == top.kept && !dropping()) drop_from_ = index;
    if (top.seen < top.total) return;
    const bool cut = top.cut;
    const std::uint64_t total = top.total;
    stack_.pop_back();
    if (drop_from_ == index) drop_from_ = -1;
    if (cut) emit(out, ":" + std::to_string(total) + "\r\n");
  }
}

}  // namespace relay::redis
