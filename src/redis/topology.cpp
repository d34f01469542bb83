#include "redis/topology.h"

namespace relay::redis {

void Topology::connectionBroke() {
  std::lock_guard lock(mutex_);
  ++unreplaced_breaks_;
}

void Topology::connectedTo(const std::string& address) {
  std::lock_guard lock(mutex_);
  if (unreplaced_breaks_ > 0) {
    --unreplaced_breaks_;
    ++counts_.reconnects;
  }
  reached(address);
}

void Topology::redirectedTo(const std::string& address) {
  std::lock_guard lock(mutex_);
  ++counts_.reconnects;
  reached(address);
}

void Topology::reached(const std::string& address) {
  if (!master_.empty() && master_ != address) ++counts_.failovers;
  master_ = address;
}

Topology::Counts Topology::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

std::string Topology::master() const {
  std::lock_guard lock(mutex_);
  return master_;
}

}  // namespace relay::redis
