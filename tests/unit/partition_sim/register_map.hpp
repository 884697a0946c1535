// The partition sim's state machine: a map of versioned registers (put, get, delete,
// compare-and-set, delete-if-version), the version of a write being its log index, with a compact
// binary command format of its own. Every replica tells a shared AppliedLog what it applies, so
// the suite checks that no two replicas ever apply different commands at one index (Raft's state
// machine safety), across crashes and restarts.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <elfin/actors/partition/state_machine.hpp>
#include <elfin/linearizability/kv_model.hpp>

namespace psim {

namespace ap = elfin::actors::partition;
namespace lin = elfin::linearizability;

// --- encoding ---------------------------------------------------------------------------------

class Writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void str(const std::string& s) {
    u64(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }
  ap::Bytes take() { return std::move(out_); }

 private:
  ap::Bytes out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
  std::uint8_t u8() {
    need(1);
    return in_[at_++];
  }
  std::uint64_t u64() {
    need(8);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(in_[at_++]) << (8 * i);
    return v;
  }
  std::string str() {
    const std::uint64_t n = u64();
    need(n);
    std::string s(reinterpret_cast<const char*>(in_.data() + at_), n);  // NOLINT: bytes as chars
    at_ += n;
    return s;
  }
  [[nodiscard]] bool done() const { return at_ == in_.size(); }

 private:
  void need(std::uint64_t n) const {
    if (in_.size() - at_ < n) throw std::runtime_error("register map: truncated bytes");
  }
  std::span<const std::uint8_t> in_;
  std::size_t at_ = 0;
};

inline ap::Bytes encode(const lin::KvInput& in) {
  Writer w;
  w.u8(static_cast<std::uint8_t>(in.call));
  w.str(in.key);
  w.str(in.value);
  w.u64(in.expected_version);
  return w.take();
}

inline lin::KvInput decode_input(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  lin::KvInput in;
  in.call = static_cast<lin::KvCall>(r.u8());
  in.key = r.str();
  in.value = r.str();
  in.expected_version = r.u64();
  return in;
}

inline ap::Bytes encode(const lin::KvOutput& out) {
  Writer w;
  w.u8(static_cast<std::uint8_t>(out.status));
  w.str(out.value);
  w.u64(out.version);
  return w.take();
}

inline lin::KvOutput decode_output(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  lin::KvOutput out;
  out.status = static_cast<lin::KvStatus>(r.u8());
  out.value = r.str();
  out.version = r.u64();
  return out;
}

// --- what the replicas applied ------------------------------------------------------------------

/// Per partition and log index, the command first applied there; a replica applying another
/// command at the same index is a divergence.
class AppliedLog {
 public:
  void applied(std::uint16_t node, std::uint64_t partition, std::uint64_t index,
               std::span<const std::uint8_t> command) {
    std::lock_guard lock(mutex_);
    ++applies_;
    auto [it, fresh] = first_.try_emplace({partition, index}, ap::Bytes(command.begin(), command.end()), node);
    if (!fresh && !std::equal(it->second.first.begin(), it->second.first.end(), command.begin(), command.end())) {
      divergences_.push_back("partition " + std::to_string(partition) + " index " + std::to_string(index) + ": node " +
                             std::to_string(node) + " applied another command than node " +
                             std::to_string(it->second.second));
    }
  }
  void restored() {
    std::lock_guard lock(mutex_);
    ++restores_;
  }
  [[nodiscard]] std::vector<std::string> divergences() const {
    std::lock_guard lock(mutex_);
    return divergences_;
  }
  [[nodiscard]] std::uint64_t applies() const {
    std::lock_guard lock(mutex_);
    return applies_;
  }
  [[nodiscard]] std::uint64_t restores() const {
    std::lock_guard lock(mutex_);
    return restores_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::pair<ap::Bytes, std::uint16_t>> first_;
  std::vector<std::string> divergences_;
  std::uint64_t applies_ = 0;
  std::uint64_t restores_ = 0;
};

// --- the state machine ----------------------------------------------------------------------------

class RegisterMap final : public ap::StateMachine {
 public:
  RegisterMap(std::shared_ptr<AppliedLog> log, std::uint16_t node, std::uint64_t partition)
      : log_(std::move(log)), node_(node), partition_(partition) {}

  ap::Bytes apply(std::uint64_t index, std::span<const std::uint8_t> command) override {
    log_->applied(node_, partition_, index, command);
    const lin::KvInput in = decode_input(command);
    auto it = data_.find(in.key);
    const bool exists = it != data_.end();
    auto current = [&] {
      return exists ? lin::KvOutput::mismatch(it->second.value, it->second.version) : lin::KvOutput::mismatch({}, 0);
    };
    switch (in.call) {
      case lin::KvCall::Get:
        return encode(exists ? lin::KvOutput::found(it->second.value, it->second.version) : lin::KvOutput::not_found());
      case lin::KvCall::Put:
        data_[in.key] = {in.value, index};
        return encode(lin::KvOutput::ok(index));
      case lin::KvCall::Delete:
        if (!exists) return encode(lin::KvOutput::not_found());
        data_.erase(it);
        return encode(lin::KvOutput::ok());
      case lin::KvCall::Cas: {
        const bool match = in.expected_version == 0 ? !exists : exists && it->second.version == in.expected_version;
        if (!match) return encode(current());
        data_[in.key] = {in.value, index};
        return encode(lin::KvOutput::ok(index));
      }
      case lin::KvCall::DeleteIfVersion:
        if (!exists || it->second.version != in.expected_version) return encode(current());
        data_.erase(it);
        return encode(lin::KvOutput::ok());
    }
    throw std::runtime_error("register map: unknown command");
  }

  /// A query is a Get's command bytes.
  [[nodiscard]] ap::Bytes query(std::span<const std::uint8_t> query) const override {
    const lin::KvInput in = decode_input(query);
    auto it = data_.find(in.key);
    return encode(it == data_.end() ? lin::KvOutput::not_found()
                                    : lin::KvOutput::found(it->second.value, it->second.version));
  }

  [[nodiscard]] ap::Bytes snapshot() const override {
    Writer w;
    w.u64(data_.size());
    for (const auto& [key, cell] : data_) {
      w.str(key);
      w.str(cell.value);
      w.u64(cell.version);
    }
    return w.take();
  }

  void restore(std::span<const std::uint8_t> snapshot) override {
    log_->restored();
    Reader r(snapshot);
    std::map<std::string, Cell> data;
    for (std::uint64_t n = r.u64(); n > 0; --n) {
      std::string key = r.str();
      std::string value = r.str();
      data[std::move(key)] = {std::move(value), r.u64()};
    }
    data_ = std::move(data);
  }

 private:
  struct Cell {
    std::string value;
    std::uint64_t version = 0;
  };
  std::shared_ptr<AppliedLog> log_;
  std::uint16_t node_;
  std::uint64_t partition_;
  std::map<std::string, Cell> data_;
};

}  // namespace psim
