#pragma once

#include <memory>

namespace relay {

/// Deleter for C handles: std::unique_ptr<redisReply, CFree<freeReplyObject>>.
template <auto F>
struct CFree {
  void operator()(auto* p) const {
    if (p) F(p);
  }
};

template <typename T, auto F>
using CHandle = std::unique_ptr<T, CFree<F>>;

}  // namespace relay
