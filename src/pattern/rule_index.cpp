#include "pattern/rule_index.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>

#include "pattern/evaluator.h"
#include "pattern/string_table.h"

namespace relay::pattern {
namespace {

using RuleList = std::vector<std::uint32_t>;

// How well a key condition narrows the candidates; lower is better.
enum Rank : int {
  kExactValue = 0,
  kAffix = 1,
  kWeakValue = 2,  // booleans, null, numeric thresholds
  kPresence = 3,
  kNotIndexable = 9
};

int rankOf(const Alternative& alternative) {
  if (const auto* literal = std::get_if<Literal>(&alternative)) {
    return literal->kind == Literal::Kind::kString || literal->kind == Literal::Kind::kNumber
               ? kExactValue
               : kWeakValue;
  }
  if (const auto* prefix = std::get_if<Prefix>(&alternative)) {
    return prefix->value.empty() ? kPresence : kAffix;
  }
  if (const auto* suffix = std::get_if<Suffix>(&alternative)) {
    return suffix->value.empty() ? kPresence : kAffix;
  }
  if (const auto* exists = std::get_if<Exists>(&alternative)) {
    return exists->present ? kPresence : kNotIndexable;
  }
  if (const auto* comparison = std::get_if<Comparison>(&alternative)) {
    // A temporal cut-off moves with now(); only fixed numeric thresholds can be indexed.
    return comparison->temporal ? kNotIndexable : kWeakValue;
  }
  return kNotIndexable;  // nested maps
}

// A field condition that every match of a rule must satisfy somewhere along its path, with
// arrays transparent: the path runs through single-alternative nested maps only.
struct KeyCondition {
  std::vector<std::string> path;
  const Field* field = nullptr;
  int rank = kNotIndexable;
};

// Collects the rule's key conditions and counts its leaf conditions (fields that are not a
// single nested map).
void findKeys(const std::vector<Field>& fields, std::vector<std::string>& path,
              std::vector<KeyCondition>& keys, std::size_t& leaves) {
  for (const Field& field : fields) {
    path.push_back(field.name);
    if (field.alternatives.size() == 1 && std::holds_alternative<Nested>(field.alternatives[0])) {
      findKeys(std::get<Nested>(field.alternatives[0]).fields, path, keys, leaves);
    } else {
      ++leaves;
      int rank = kExactValue;
      for (const Alternative& alternative : field.alternatives) {
        rank = std::max(rank, rankOf(alternative));
      }
      if (rank != kNotIndexable) keys.push_back({path, &field, rank});
    }
    path.pop_back();
  }
}

// Staging area of one path while the index is built.
struct NodeBuilder {
  std::map<std::string, std::uint32_t> children;
  std::map<std::string, RuleList> exact_strings;
  std::map<double, RuleList> exact_numbers;
  std::vector<std::pair<double, std::uint32_t>> thresholds[4];  // by Comparison::Op
  RuleList trues, falses, nulls, presence;
  std::map<std::string, RuleList> prefixes;
  std::map<std::string, RuleList> suffixes;
};

}  // namespace

struct RuleIndex::Impl {
  // One field path some key condition names.
  struct Node {
    std::vector<std::pair<std::string, std::uint32_t>> children;  // field name -> node
    std::uint32_t child_count = 0;
    StringTable child_table;  // the same, hashed, when there are many children
    StringTable exact_strings;
    std::vector<std::pair<double, Posting>> exact_numbers;  // sorted by value
    // Numeric thresholds by Comparison::Op (gt, gte, lt, lte), sorted by threshold: the rules
    // a number satisfies are one contiguous run of each.
    std::vector<std::pair<double, std::uint32_t>> thresholds[4];
    bool has_numbers = false;
    Posting trues, falses, nulls, presence;
    StringTable prefixes;
    std::vector<std::uint32_t> prefix_lengths;  // distinct, ascending
    StringTable suffixes;
    std::vector<std::uint32_t> suffix_lengths;
    bool has_strings = false;
  };

  static constexpr std::size_t kLinearChildren = 8;  // above: children found by hash
  static constexpr std::size_t kFindChildren = 4;    // up to: each child found by find()

  std::vector<std::shared_ptr<const Pattern>> rules;
  std::vector<Node> nodes;  // nodes[0] is the event's top level
  std::vector<std::uint32_t> postings;
  std::vector<bool> exact;  // per rule: a key hit alone means a match
  RuleList scanned;         // rules without a key condition
  Stats stats;

  void build() {
    std::vector<NodeBuilder> builders(1);
    stats.rules = rules.size();
    exact.assign(rules.size(), false);
    for (std::uint32_t id = 0; id < rules.size(); ++id) {
      std::vector<std::string> path;
      std::vector<KeyCondition> keys;
      std::size_t leaves = 0;
      findKeys(rules[id]->fields(), path, keys, leaves);
      if (keys.empty()) {
        scanned.push_back(id);
        ++stats.scanned;
        continue;
      }
      const KeyCondition& key = *std::min_element(
          keys.begin(), keys.end(), [](const KeyCondition& a, const KeyCondition& b) {
            if (a.rank != b.rank) return a.rank < b.rank;
            return a.field->alternatives.size() < b.field->alternatives.size();
          });
      ++stats.indexed;
      if (leaves == 1) {
        exact[id] = true;
        ++stats.exact;
      }
      std::uint32_t at = 0;
      for (const std::string& name : key.path) {
        const auto found = builders[at].children.find(name);
        if (found != builders[at].children.end()) {
          at = found->second;
        } else {
          const auto next = static_cast<std::uint32_t>(builders.size());
          builders[at].children.emplace(name, next);
          builders.emplace_back();
          at = next;
        }
      }
      NodeBuilder& node = builders[at];
      for (const Alternative& alternative : key.field->alternatives) {
        addAlternative(node, alternative, id);
      }
    }
    nodes.resize(builders.size());
    for (std::size_t i = 0; i < builders.size(); ++i) finish(builders[i], nodes[i]);
  }

  static void addAlternative(NodeBuilder& node, const Alternative& alternative, std::uint32_t id) {
    if (const auto* literal = std::get_if<Literal>(&alternative)) {
      switch (literal->kind) {
        case Literal::Kind::kString:
          node.exact_strings[literal->string].push_back(id);
          break;
        case Literal::Kind::kNumber:
          node.exact_numbers[literal->number].push_back(id);
          break;
        case Literal::Kind::kBool:
          (literal->boolean ? node.trues : node.falses).push_back(id);
          break;
        case Literal::Kind::kNull:
          node.nulls.push_back(id);
          break;
      }
    } else if (const auto* prefix = std::get_if<Prefix>(&alternative)) {
      node.prefixes[prefix->value].push_back(id);
    } else if (const auto* suffix = std::get_if<Suffix>(&alternative)) {
      node.suffixes[suffix->value].push_back(id);
    } else if (const auto* comparison = std::get_if<Comparison>(&alternative)) {
      node.thresholds[static_cast<int>(comparison->op)].emplace_back(comparison->number, id);
    } else {
      node.presence.push_back(id);  // exists: true, the only other indexable alternative
    }
  }

  Posting store(RuleList rules_of) {
    std::sort(rules_of.begin(), rules_of.end());
    rules_of.erase(std::unique(rules_of.begin(), rules_of.end()), rules_of.end());
    Posting posting{static_cast<std::uint32_t>(postings.size()),
                    static_cast<std::uint32_t>(rules_of.size())};
    postings.insert(postings.end(), rules_of.begin(), rules_of.end());
    return posting;
  }

  static std::vector<std::uint32_t> lengthsOf(const std::map<std::string, RuleList>& affixes) {
    std::vector<std::uint32_t> lengths;
    for (const auto& [text, ids] : affixes)
      lengths.push_back(static_cast<std::uint32_t>(text.size()));
    std::sort(lengths.begin(), lengths.end());
    lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
    return lengths;
  }

  void finish(const NodeBuilder& builder, Node& node) {
    for (const auto& [name, child] : builder.children) node.children.emplace_back(name, child);
    node.child_count = static_cast<std::uint32_t>(node.children.size());
    if (node.children.size() > kLinearChildren) {
      // Name -> slot in `children`, stored as a one-entry posting.
      std::map<std::string, RuleList> by_name;
      for (std::uint32_t slot = 0; slot < node.children.size(); ++slot) {
        by_name[node.children[slot].first] = {slot};
      }
      node.child_table.build(by_name, postings);
    }
    node.exact_strings.build(builder.exact_strings, postings);
    for (const auto& [number, ids] : builder.exact_numbers) {
      node.exact_numbers.emplace_back(number, store(ids));
    }
    node.has_numbers = !node.exact_numbers.empty();
    for (int op = 0; op < 4; ++op) {
      node.thresholds[op] = builder.thresholds[op];
      std::sort(node.thresholds[op].begin(), node.thresholds[op].end());
      node.has_numbers = node.has_numbers || !node.thresholds[op].empty();
    }
    node.trues = store(builder.trues);
    node.falses = store(builder.falses);
    node.nulls = store(builder.nulls);
    node.presence = store(builder.presence);
    node.prefixes.build(builder.prefixes, postings);
    node.prefix_lengths = lengthsOf(builder.prefixes);
    node.suffixes.build(builder.suffixes, postings);
    node.suffix_lengths = lengthsOf(builder.suffixes);
    node.has_strings =
        !builder.exact_strings.empty() || !builder.prefixes.empty() || !builder.suffixes.empty();
  }

  // --- matching ---------------------------------------------------------------------------

  [[gnu::always_inline]] void append(const Posting& posting, RuleList& out) const {
    out.insert(out.end(), postings.begin() + posting.begin,
               postings.begin() + posting.begin + posting.count);
  }

  // The slot in node.children of field `name`, or -1.
  [[gnu::always_inline]] std::int64_t childOf(const Node& node, std::string_view name) const {
    if (node.child_count <= kLinearChildren) {
      const auto* children = node.children.data();
      for (std::uint32_t i = 0; i < node.child_count; ++i) {
        const std::string& child = children[i].first;
        if (child.size() == name.size() &&
            std::memcmp(child.data(), name.data(), name.size()) == 0) {
          return i;
        }
      }
      return -1;
    }
    const Posting* found = node.child_table.find(name);
    if (found == nullptr) return -1;
    return static_cast<std::int64_t>(postings[found->begin]);
  }

  // A member was found at `node`'s path with value `value`.
  [[gnu::always_inline]] void visitMember(const Node& node, const event::Value& value,
                                          RuleList& out) const {
    if (node.presence.count != 0) append(node.presence, out);
    visitValue(node, value, out);
  }

  [[gnu::always_inline]] void visitValue(const Node& node, const event::Value& value,
                                         RuleList& out) const {
    switch (value.type()) {
      case event::Type::kArray:
        visitArray(node, value, out);
        return;
      case event::Type::kObject:
        if (!node.children.empty()) visitObject(node, value, out);
        return;
      case event::Type::kString:
        if (node.has_strings) visitString(node, value.string(), out);
        return;
      case event::Type::kNumber:
        if (node.has_numbers) visitNumber(node, value.number(), out);
        return;
      case event::Type::kTrue:
        if (node.trues.count != 0) append(node.trues, out);
        return;
      case event::Type::kFalse:
        if (node.falses.count != 0) append(node.falses, out);
        return;
      case event::Type::kNull:
        if (node.nulls.count != 0) append(node.nulls, out);
        return;
    }
  }

  // Out of line: the one place where visitValue() recurses (arrays of arrays).
  [[gnu::noinline]] void visitArray(const Node& node, const event::Value& array,
                                    RuleList& out) const {
    for (const event::Value element : array.elements()) visitValue(node, element, out);
  }

  void visitObject(const Node& node, const event::Value& object, RuleList& out) const {
    if (node.child_count <= kFindChildren) {
      // Few names to look for: find() each one, which skips the rest of the object.
      for (const auto& [name, child] : node.children) {
        if (const std::optional<event::Value> value = object.find(name)) {
          visitMember(nodes[child], *value, out);
        }
      }
      return;
    }
    // Many names: one pass over the members, each looked up among the children (an event has
    // no repeated key: event::decode() rejects them).
    const event::Value::Range members = object.members();
    for (auto it = members.begin(); !(it == members.end()); ++it) {
      const std::int64_t child = childOf(node, it.key());
      if (child < 0) continue;
      visitMember(nodes[node.children[static_cast<std::size_t>(child)].second], *it, out);
    }
  }

  void visitString(const Node& node, std::string_view text, RuleList& out) const {
    if (const Posting* found = node.exact_strings.find(text)) append(*found, out);
    for (const std::uint32_t length : node.prefix_lengths) {
      if (length > text.size()) break;
      if (const Posting* found = node.prefixes.find(text.substr(0, length))) append(*found, out);
    }
    for (const std::uint32_t length : node.suffix_lengths) {
      if (length > text.size()) break;
      if (const Posting* found = node.suffixes.find(text.substr(text.size() - length))) {
        append(*found, out);
      }
    }
  }

  void visitNumber(const Node& node, double number, RuleList& out) const {
    const auto it = std::lower_bound(
        node.exact_numbers.begin(), node.exact_numbers.end(), number,
        [](const std::pair<double, Posting>& entry, double value) { return entry.first < value; });
    if (it != node.exact_numbers.end() && it->first == number) append(it->second, out);
    using Entry = std::pair<double, std::uint32_t>;
    const auto below = [number](const Entry& entry) { return entry.first < number; };
    const auto at_most = [number](const Entry& entry) { return entry.first <= number; };
    const auto run = [&out](auto first, auto last) {
      for (auto entry = first; entry != last; ++entry) out.push_back(entry->second);
    };
    // The number is above thresholds below it (gt), at least those at most it (gte), below
    // those above it (lt), at most those at least it (lte).
    const auto& gt = node.thresholds[static_cast<int>(Comparison::Op::kGt)];
    run(gt.begin(), std::partition_point(gt.begin(), gt.end(), below));
    const auto& gte = node.thresholds[static_cast<int>(Comparison::Op::kGte)];
    run(gte.begin(), std::partition_point(gte.begin(), gte.end(), at_most));
    const auto& lt = node.thresholds[static_cast<int>(Comparison::Op::kLt)];
    run(std::partition_point(lt.begin(), lt.end(), at_most), lt.end());
    const auto& lte = node.thresholds[static_cast<int>(Comparison::Op::kLte)];
    run(std::partition_point(lte.begin(), lte.end(), below), lte.end());
  }

  void match(const event::Event& event, Instant now, RuleList& out) const {
    const std::size_t base = out.size();
    const event::Value root = event.root();
    if (!nodes[0].children.empty()) visitObject(nodes[0], root, out);
    const auto first = out.begin() + static_cast<std::ptrdiff_t>(base);
    std::sort(first, out.end());
    out.erase(std::unique(first, out.end()), out.end());
    // Candidates that the key condition alone does not decide get the full check.
    auto kept = first;
    for (auto it = first; it != out.end(); ++it) {
      if (exact[*it] || fieldsHold(rules[*it]->fields(), root, now)) *kept++ = *it;
    }
    out.erase(kept, out.end());
    if (scanned.empty()) return;
    const std::size_t indexed_end = out.size();
    for (const std::uint32_t id : scanned) {
      if (fieldsHold(rules[id]->fields(), root, now)) out.push_back(id);
    }
    std::inplace_merge(out.begin() + static_cast<std::ptrdiff_t>(base),
                       out.begin() + static_cast<std::ptrdiff_t>(indexed_end), out.end());
  }
};

RuleIndex::RuleIndex(std::vector<std::shared_ptr<const Pattern>> rules)
    : impl_(std::make_unique<Impl>()) {
  impl_->rules = std::move(rules);
  impl_->build();
}

RuleIndex::~RuleIndex() = default;
RuleIndex::RuleIndex(RuleIndex&&) noexcept = default;
RuleIndex& RuleIndex::operator=(RuleIndex&&) noexcept = default;

std::size_t RuleIndex::size() const { return impl_->rules.size(); }

const Pattern& RuleIndex::rule(std::size_t index) const { return *impl_->rules[index]; }

RuleIndex::Stats RuleIndex::stats() const { return impl_->stats; }

void RuleIndex::match(const event::Event& event, Instant now,
                      std::vector<std::uint32_t>& out) const {
  impl_->match(event, now, out);
}

void RuleIndex::match(const event::Event& event, const Clock& clock,
                      std::vector<std::uint32_t>& out) const {
  impl_->match(event, Instant::fromWallTime(clock.now()), out);
}

}  // namespace relay::pattern
