// The keys tuning left unmeasured in this process, with why. Lazy tuning does not try one again
// (the default answers it); a failed one is also reported unmeasured by tune() until a retune.
// Thread-safe: a lazy call on a failed key answers without waiting for another key's measurement.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace fp8gemm::tuning {

class UnmeasuredKeys {
 public:
  struct Unmeasured {
    std::string reason;
    bool failed = false;  // measuring threw, or no timer could be made
  };

  void record(const std::string& key, Unmeasured u) {
    std::lock_guard lock(mutex_);
    keys_[key] = std::move(u);
  }
  void forget(const std::string& key) {
    std::lock_guard lock(mutex_);
    keys_.erase(key);
  }
  std::optional<Unmeasured> find(const std::string& key) const {
    std::lock_guard lock(mutex_);
    auto it = keys_.find(key);
    if (it == keys_.end()) return std::nullopt;
    return it->second;
  }
  // The failed ones: key -> reason.
  std::map<std::string, std::string> failed() const {
    std::lock_guard lock(mutex_);
    std::map<std::string, std::string> out;
    for (const auto& [key, u] : keys_)
      if (u.failed) out.emplace(key, u.reason);
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Unmeasured> keys_;
};

}  // namespace fp8gemm::tuning
