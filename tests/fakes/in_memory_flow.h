#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "invocation/flow.h"
#include "invocation/keys.h"
#include "invocation/lifecycle_store.h"
#include "invocation/marker.h"
#include "invocation/plan.h"

namespace relay::testing {

/// The flow-control half of InMemoryLifecycleStore: the Lua of
/// src/invocation/flow_lua_library.h rule for rule, over maps named like the Redis keys. Not
/// thread-safe: the store calls it under its own lock.
class InMemoryFlow {
 public:
  using Hash = std::map<std::string, std::string>;

  /// What a call sees of the store: the due index, the PEL, the time, the statistics.
  struct Context {
    std::map<std::string, std::int64_t>& due;
    const std::map<std::string, long long>& pel;
    std::int64_t now = 0;
    std::chrono::milliseconds promise{30'000};
    std::function<bool()> may_expire = [] { return true; };
    std::vector<invocation::FlowNote>* notes = nullptr;
    std::map<std::string, long long>* stats = nullptr;
  };

  /// A gate's decision: go (nullopt), wait until `at` (0: until its key wakes it), superseded.
  struct Gate {
    bool superseded = false;
    std::string by;
    std::int64_t at = 0;
    std::string reason;
  };

  explicit InMemoryFlow(invocation::StreamKeys names) : names_(std::move(names)) {}

  /// flow_arrive: the plan is recorded now.
  void arrive(const invocation::Plan& plan, Hash& state, const std::string& id, Context& ctx) {
    for (std::size_t i = 0; i < plan.invocations.size(); ++i) {
      const invocation::PlannedInvocation& planned = plan.invocations[i];
      const invocation::FlowControl& flow = planned.flow;
      const std::string field = planned.field();
      if (flow.dedupe) {
        const std::string key = name("dedupe", planned, flow.dedupe->scope, flow.dedupe->value);
        auto found = dedupe_.find(key);
        if (found == dedupe_.end() || found->second.second <= ctx.now) {
          dedupe_[key] = {id, ctx.now + flow.dedupe->ttl.count()};
        } else if (found->second.first != id) {
          state[field] = "deduplicated:0:" + found->second.first;
          stat(ctx, field, "deduplicated");
          note(ctx, invocation::FlowNote::Kind::kDeduplicated, i, "", found->second.first, 0);
        }
      }
      if (flow.debounce && !terminal(state, field)) {
        Debounce& d =
            debounce_[name("debounce", planned, flow.debounce->scope, flow.debounce->value)];
        std::int64_t first = ctx.now;
        const bool burst = !d.latest.empty() && d.latest != d.done;
        if (!(burst && orderOf(id) < orderOf(d.latest))) {
          if (burst) {
            first = d.first;
            if (d.latest != id) ctx.due[d.latest] = ctx.now;
          }
          d.latest = id;
          d.first = first;
          d.due = std::min(ctx.now + flow.debounce->period.count(),
                           first + flow.debounce->max_wait.count());
        }
      }
      if (flow.key && flow.key->singleton && !terminal(state, field)) {
        const std::string latest = name("latest", planned, flow.key->scope, flow.key->value);
        Queue& queue = waits_[name("wait", planned, flow.key->scope, flow.key->value)];
        auto previous = latest_.find(latest);
        const bool older = previous != latest_.end() && orderOf(id) < orderOf(previous->second);
        if (!older) {
          if (previous != latest_.end() && previous->second != id && queue.has(previous->second)) {
            queue.remove(previous->second);
            ctx.due[previous->second] = ctx.now;
          }
          latest_[latest] = id;
        }
      }
    }
  }

  /// flow_gate: whether invocation `planned` (its next attempt `attempt`) may start now.
  std::optional<Gate> gate(const invocation::PlannedInvocation& planned, const Hash& state,
                           const std::string& id, int attempt, Context& ctx) {
    const invocation::FlowControl& flow = planned.flow;
    if (attempt == 1 && flow.debounce) {
      auto found =
          debounce_.find(name("debounce", planned, flow.debounce->scope, flow.debounce->value));
      if (found != debounce_.end()) {
        Debounce& d = found->second;
        if (d.latest != id) return Gate{true, d.latest, 0, ""};
        if (d.done != id) {
          if (ctx.now < d.due) return Gate{false, "", d.due, "debounced"};
          d.done = id;
        }
      }
    }
    if (attempt == 1 && flow.key && flow.key->singleton) {
      auto latest = latest_.find(name("latest", planned, flow.key->scope, flow.key->value));
      if (latest != latest_.end() && latest->second != id) {
        return Gate{true, latest->second, 0, ""};
      }
    }
    if (flow.key) {
      const std::string run_key = name("run", planned, flow.key->scope, flow.key->value);
      const std::string wait_key = name("wait", planned, flow.key->scope, flow.key->value);
      std::map<std::string, std::int64_t>& run = runs_[run_key];
      Queue& queue = waits_[wait_key];
      const bool expired = std::any_of(run.begin(), run.end(),
                                       [&](const auto& slot) { return slot.second <= ctx.now; });
      if (expired && ctx.may_expire()) {
        std::erase_if(run, [&](const auto& slot) { return slot.second <= ctx.now; });
      }
      if (!run.count("w:" + id)) {
        const double order = orderOf(id);
        const auto head = queue.head();
        const bool first_in_line = !head || head->second == id || order <= head->first;
        if (static_cast<int>(run.size()) >= flow.key->limit || !first_in_line) {
          queue.add(order, id);
          wake(run, queue, flow.key->limit, ctx);
          if (!run.count("w:" + id)) {
            std::int64_t at = 0;
            if (queue.head() && queue.head()->second == id) at = earliest(run).value_or(ctx.now);
            return Gate{false, "", at, "key_busy"};
          }
        }
      }
    }
    if (!flow.throttles.empty()) {
      std::optional<std::int64_t> reserved;
      auto waiting = state.find(std::string(invocation::kWaitPrefix) + planned.field());
      if (waiting != state.end()) {
        auto parsed = invocation::parseFlowWait(waiting->second);
        if (parsed && parsed->reason == invocation::FlowWait::kThrottled) reserved = parsed->until;
      }
      std::optional<double> wait;
      for (const invocation::ThrottleGate& gate : flow.throttles) {
        Throttle& t = throttles_[throttleKey(planned, gate)];
        const double interval = intervalOf(gate);
        const double tau = interval * gate.burst;
        const double now = static_cast<double>(ctx.now);
        std::optional<double> at;
        if (reserved) {
          if (ctx.now < *reserved) {
            at = static_cast<double>(*reserved);
          } else if (t.a > now + tau) {
            at = t.a - tau;
          }
        } else if (t.r > now || t.a > now + tau) {
          at = std::max({t.r, now, t.a - tau});
          t.r = *at + interval;
        }
        if (at && (!wait || *at > *wait)) wait = at;
      }
      if (wait) {
        return Gate{false, "", static_cast<std::int64_t>(std::ceil(*wait)), "throttled"};
      }
    }
    return std::nullopt;
  }

  /// flow_take: claimed with `token` until `deadline`.
  void take(const invocation::PlannedInvocation& planned, Hash& state, const std::string& id,
            const std::string& token, std::int64_t deadline, std::int64_t now) {
    const invocation::FlowControl& flow = planned.flow;
    for (const invocation::ThrottleGate& gate : flow.throttles) {
      Throttle& t = throttles_[throttleKey(planned, gate)];
      t.a = std::max(t.a, static_cast<double>(now)) + intervalOf(gate);
    }
    if (flow.key) {
      std::map<std::string, std::int64_t>& run =
          runs_[name("run", planned, flow.key->scope, flow.key->value)];
      run.erase("w:" + id);
      run[token] = deadline;
      waits_[name("wait", planned, flow.key->scope, flow.key->value)].remove(id);
    }
    state.erase(std::string(invocation::kWaitPrefix) + planned.field());
  }

  /// flow_wait: it waits for `reason` until `at`, counted once per wait.
  void wait(std::size_t index, const std::string& field, Hash& state, const std::string& reason,
            std::int64_t at, Context& ctx) {
    const std::string name = std::string(invocation::kWaitPrefix) + field;
    auto before = state.find(name);
    const bool counted = before != state.end() && before->second.rfind(reason + ":", 0) == 0;
    state[name] = reason + ":" + std::to_string(at);
    if (!counted) {
      stat(ctx, field, "deferred");
      note(ctx, invocation::FlowNote::Kind::kDeferred, index, reason, "", at);
    }
  }

  /// A superseded invocation leaves its key's queue.
  void superseded(const invocation::PlannedInvocation& planned, const std::string& id) {
    if (planned.flow.key) {
      waits_[name("wait", planned, planned.flow.key->scope, planned.flow.key->value)].remove(id);
    }
  }

  /// An invocation that ends while it waits (cancelled, expired) leaves its key's queue, and a
  /// slot promised to it goes to the next waiter (the start script's leave_queue).
  void leave(const invocation::PlannedInvocation& planned, const std::string& id, Context& ctx) {
    if (!planned.flow.key) return;
    superseded(planned, id);
    std::map<std::string, std::int64_t>& run =
        runs_[heldName("run", planned.flow, planned.field())];
    if (run.erase("w:" + id) > 0) {
      wake(run, waits_[heldName("wait", planned.flow, planned.field())], planned.flow.key->limit,
           ctx);
    }
  }

  /// flow_give_back: the claim `token` of an invocation of app `app` held under `flow` ends.
  int giveBack(const invocation::FlowControl* flow, std::string_view field,
               const std::string& token, Context& ctx) {
    if (!flow || !flow->key) return 0;
    std::map<std::string, std::int64_t>& run = runs_[heldName("run", *flow, field)];
    run.erase(token);
    return wake(run, waits_[heldName("wait", *flow, field)], flow->key->limit, ctx);
  }

  /// The renew script's part: the slot lasts as long as the claim.
  void renew(const invocation::FlowControl* flow, std::string_view field, const std::string& token,
             std::int64_t deadline) {
    if (!flow || !flow->key) return;
    std::map<std::string, std::int64_t>& run = runs_[heldName("run", *flow, field)];
    if (auto slot = run.find(token); slot != run.end()) slot->second = deadline;
  }

  /// Introspection: the members of a key's running set and queue (by key name).
  std::vector<std::string> running(const std::string& key) const {
    std::vector<std::string> members;
    if (auto found = runs_.find(key); found != runs_.end()) {
      for (const auto& [member, deadline] : found->second) members.push_back(member);
    }
    return members;
  }
  std::vector<std::string> waiting(const std::string& key) const {
    std::vector<std::string> members;
    if (auto found = waits_.find(key); found != waits_.end()) {
      for (const auto& [order, id] : found->second.members) members.push_back(id);
    }
    return members;
  }

 private:
  struct Throttle {
    double a = 0;  // the admissions' theoretical arrival time
    double r = 0;  // the next turn to reserve
  };
  struct Debounce {
    std::string latest, done;
    std::int64_t first = 0, due = 0;
  };
  /// A sorted set of ids by arrival order.
  struct Queue {
    std::set<std::pair<double, std::string>> members;
    std::map<std::string, double> order;
    bool has(const std::string& id) const { return order.count(id) > 0; }
    void add(double score, const std::string& id) {  // ZADD NX
      if (order.emplace(id, score).second) members.insert({score, id});
    }
    void remove(const std::string& id) {
      auto found = order.find(id);
      if (found == order.end()) return;
      members.erase({found->second, id});
      order.erase(found);
    }
    std::optional<std::pair<double, std::string>> head() const {
      if (members.empty()) return std::nullopt;
      return *members.begin();
    }
  };

  static double orderOf(const std::string& id) {
    const std::size_t dash = id.find('-');
    if (dash == std::string::npos) return 0;
    return std::stod(id.substr(0, dash)) * 1024 + std::min(std::stod(id.substr(dash + 1)), 1023.0);
  }
  static double intervalOf(const invocation::ThrottleGate& gate) {
    return static_cast<double>(gate.period.count()) / static_cast<double>(gate.limit);
  }
  static std::optional<std::int64_t> earliest(const std::map<std::string, std::int64_t>& run) {
    std::optional<std::int64_t> first;
    for (const auto& [member, deadline] : run) {
      if (!first || deadline < *first) first = deadline;
    }
    return first;
  }
  static bool terminal(const Hash& state, const std::string& field) {
    auto found = state.find(field);
    if (found == state.end()) return false;
    auto marker = invocation::Marker::parse(found->second);
    return marker && marker->terminal();
  }
  static void stat(Context& ctx, const std::string& field, const std::string& counter) {
    if (ctx.stats) ++(*ctx.stats)[field + ":" + counter];
  }
  static void note(Context& ctx, invocation::FlowNote::Kind kind, std::size_t index,
                   std::string reason, std::string other, std::int64_t at) {
    if (!ctx.notes) return;
    invocation::FlowNote note;
    note.kind = kind;
    note.index = index;
    note.reason = std::move(reason);
    note.other = std::move(other);
    note.at = at;
    ctx.notes->push_back(std::move(note));
  }

  std::string name(std::string_view kind, const invocation::PlannedInvocation& planned,
                   invocation::FlowScope scope, const std::string& value) const {
    return names_.flow(kind, invocation::flowScopeName(scope, planned.app, planned.field()), value);
  }
  std::string heldName(std::string_view kind, const invocation::FlowControl& flow,
                       std::string_view field) const {
    const std::string_view app = field.substr(0, field.find('/'));
    return names_.flow(kind, invocation::flowScopeName(flow.key->scope, app, field),
                       flow.key->value);
  }
  std::string throttleKey(const invocation::PlannedInvocation& planned,
                          const invocation::ThrottleGate& gate) const {
    return names_.flow("throttle",
                       invocation::flowScopeName(gate.scope, planned.app, planned.field()));
  }

  /// flow_wake.
  int wake(std::map<std::string, std::int64_t>& run, Queue& queue, int limit, Context& ctx) {
    int woke = 0;
    int held = static_cast<int>(run.size());
    for (int i = 0; i < limit + 8 && held < limit; ++i) {
      const auto head = queue.head();
      if (!head) break;
      queue.remove(head->second);
      if (ctx.pel.count(head->second)) {
        run["w:" + head->second] = ctx.now + ctx.promise.count();
        ctx.due[head->second] = ctx.now;
        ++held;
        ++woke;
      }
    }
    if (const auto head = queue.head()) {
      if (const auto first = earliest(run)) {
        auto due = ctx.due.find(head->second);
        if (due == ctx.due.end()) {
          ctx.due[head->second] = *first;
        } else {
          due->second = std::min(due->second, *first);
        }
      }
    }
    return woke;
  }

  invocation::StreamKeys names_;
  std::map<std::string, Throttle> throttles_;
  std::map<std::string, std::map<std::string, std::int64_t>> runs_;
  std::map<std::string, Queue> waits_;
  std::map<std::string, std::string> latest_;
  std::map<std::string, std::pair<std::string, std::int64_t>> dedupe_;  // first id, expiry
  std::map<std::string, Debounce> debounce_;
};

}  // namespace relay::testing
