// Histories of a versioned key-value store generated from a real sequential store: clients invoke
// operations one after another, each takes effect at a random instant inside its interval (in
// that order on one store, which assigns increasing versions with random gaps), so every history
// is linearizable by construction; some operations get no answer (half of them took effect).
// Then one anomaly may be injected, chosen so that no linearization can explain it.
// Shared by the tests and tests/bench/bench_linearizability.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <elfin/linearizability/history.hpp>
#include <elfin/linearizability/kv_model.hpp>

namespace lin_test {

namespace lin = elfin::linearizability;
using KvHistory = lin::History<lin::KvInput, lin::KvOutput>;

struct GenOptions {
  std::size_t operations = 1000;
  std::size_t keys = 10;
  std::size_t clients = 8;
  double pending = 0.02;    ///< share of operations that get no answer
  lin::Time latency = 100;  ///< an operation takes up to twice this
  lin::Time think = 20;     ///< a client waits up to this between operations
  bool deletes = true;      ///< false: no delete or delete_if_version (gets instead)
  std::uint64_t seed = 1;
};

/// A linearizable history of `options.operations` operations.
inline KvHistory generate(const GenOptions& options) {
  std::mt19937_64 rng(options.seed);
  auto below = [&](std::uint64_t n) { return n == 0 ? 0 : rng() % n; };
  struct Planned {
    std::uint64_t client;
    lin::Time invoke, at, complete;
    bool answered, applied;
    lin::KvCall call;
    std::string key;
  };
  std::vector<Planned> plan;
  plan.reserve(options.operations);
  std::vector<lin::Time> next_free(options.clients, 0);
  std::vector<std::uint64_t> client_id(options.clients);
  std::uint64_t next_client = 1;
  for (auto& id : client_id) id = next_client++;
  for (std::size_t i = 0; i < options.operations; ++i) {
    // The client that is free first goes next.
    const std::size_t c =
        static_cast<std::size_t>(std::min_element(next_free.begin(), next_free.end()) - next_free.begin());
    Planned p{};
    p.client = client_id[c];
    p.invoke = next_free[c];
    p.at = p.invoke + static_cast<lin::Time>(below(static_cast<std::uint64_t>(options.latency)));
    p.complete = p.at + static_cast<lin::Time>(below(static_cast<std::uint64_t>(options.latency)));
    p.answered = static_cast<double>(rng() % 1'000'000) >= options.pending * 1'000'000.0;
    p.applied = p.answered || rng() % 2 == 0;
    const std::uint64_t r = below(100);
    p.call = r < 40   ? lin::KvCall::Get
             : r < 70 ? lin::KvCall::Put
             : r < 82 ? lin::KvCall::Cas
             : r < 91 ? lin::KvCall::Delete
                      : lin::KvCall::DeleteIfVersion;
    if (!options.deletes && (p.call == lin::KvCall::Delete || p.call == lin::KvCall::DeleteIfVersion)) {
      p.call = lin::KvCall::Get;
    }
    p.key = "k" + std::to_string(below(options.keys));
    plan.push_back(std::move(p));
    next_free[c] = plan.back().complete + 1 + static_cast<lin::Time>(below(static_cast<std::uint64_t>(options.think)));
    if (!plan.back().answered) client_id[c] = next_client++;  // a client that lost its answer is a new one
  }
  // Apply in order of the instants the operations take effect.
  std::vector<std::size_t> order(plan.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return plan[a].at < plan[b].at; });
  struct Cell {
    bool exists = false;
    std::string value;
    std::uint64_t version = 0;
  };
  std::map<std::string, Cell> store;
  std::uint64_t version = 0;
  std::vector<lin::KvInput> inputs(plan.size());
  std::vector<lin::KvOutput> outputs(plan.size());
  for (std::size_t i : order) {
    const Planned& p = plan[i];
    Cell& cell = store[p.key];
    const std::string value = "c" + std::to_string(p.client) + "." + std::to_string(i);
    // An expected version that matches half of the time.
    const std::uint64_t expected = rng() % 2 == 0 ? cell.version : (cell.version > 0 ? below(cell.version) + 1 : 1);
    lin::KvOutput out;
    switch (p.call) {
      case lin::KvCall::Get:
        inputs[i] = lin::KvInput::get(p.key);
        out = cell.exists ? lin::KvOutput::found(cell.value, cell.version) : lin::KvOutput::not_found();
        break;
      case lin::KvCall::Put:
        inputs[i] = lin::KvInput::put(p.key, value);
        if (p.applied) {
          version += 1 + below(3);
          cell = {true, value, version};
        }
        out = lin::KvOutput::ok(cell.version);
        break;
      case lin::KvCall::Cas: {
        const std::uint64_t e = cell.exists ? expected : (rng() % 2 == 0 ? 0 : expected);
        inputs[i] = lin::KvInput::cas(p.key, e, value);
        const bool match = e == 0 ? !cell.exists : cell.exists && cell.version == e;
        if (match && p.applied) {
          version += 1 + below(3);
          cell = {true, value, version};
          out = lin::KvOutput::ok(cell.version);
        } else {
          out = cell.exists ? lin::KvOutput::mismatch(cell.value, cell.version) : lin::KvOutput::mismatch({}, 0);
        }
        break;
      }
      case lin::KvCall::Delete:
        inputs[i] = lin::KvInput::del(p.key);
        out = cell.exists ? lin::KvOutput::ok() : lin::KvOutput::not_found();
        if (p.applied) {
          cell.exists = false;
          cell.value.clear();
        }
        break;
      case lin::KvCall::DeleteIfVersion: {
        const std::uint64_t e = std::max<std::uint64_t>(expected, 1);
        inputs[i] = lin::KvInput::delete_if_version(p.key, e);
        if (cell.exists && cell.version == e) {
          out = lin::KvOutput::ok();
          if (p.applied) {
            cell.exists = false;
            cell.value.clear();
          }
        } else {
          out = cell.exists ? lin::KvOutput::mismatch(cell.value, cell.version) : lin::KvOutput::mismatch({}, 0);
        }
        break;
      }
    }
    outputs[i] = std::move(out);
  }
  KvHistory history;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].answered) {
      history.add(plan[i].client, plan[i].invoke, plan[i].complete, std::move(inputs[i]), std::move(outputs[i]));
    } else {
      history.add_pending(plan[i].client, plan[i].invoke, std::move(inputs[i]));
    }
  }
  return history;
}

enum class Anomaly { GhostValue, StaleRead, LostWrite };

/// Changes one answer of `history` so that it is certainly not linearizable; the key it touched,
/// or nothing if the history has no place for that anomaly.
inline std::optional<std::string> inject(KvHistory& history, Anomaly anomaly, std::uint64_t seed) {
  auto& ops = history.operations;
  std::vector<std::size_t> order(ops.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  auto is_found_get = [&](const lin::Operation<lin::KvInput, lin::KvOutput>& op) {
    return op.input.call == lin::KvCall::Get && op.output && op.output->status == lin::KvStatus::Ok;
  };
  auto is_write = [&](const lin::Operation<lin::KvInput, lin::KvOutput>& op) {
    return op.output && op.output->status == lin::KvStatus::Ok &&
           (op.input.call == lin::KvCall::Put || op.input.call == lin::KvCall::Cas);
  };
  for (std::size_t g : order) {
    auto& get = ops[g];
    if (!is_found_get(get)) continue;
    const std::string& key = get.input.key;
    switch (anomaly) {
      case Anomaly::GhostValue:
        get.output->value = "ghost";
        return key;
      case Anomaly::StaleRead:
        // W1 completed before W2 was invoked, W2 completed before the get was invoked: the get
        // cannot see W1's version (versions only grow, so W1's cannot be current after W2).
        for (std::size_t w1 = 0; w1 < ops.size(); ++w1) {
          if (!is_write(ops[w1]) || ops[w1].input.key != key) continue;
          for (std::size_t w2 = 0; w2 < ops.size(); ++w2) {
            if (!is_write(ops[w2]) || ops[w2].input.key != key) continue;
            if (*ops[w1].complete < ops[w2].invoke && *ops[w2].complete < get.invoke) {
              get.output = lin::KvOutput::found(ops[w1].input.value, ops[w1].output->version);
              return key;
            }
          }
        }
        break;
      case Anomaly::LostWrite: {
        // A write completed before the get was invoked and no delete of the key was invoked
        // before the get completed: "not found" is impossible.
        bool written = false;
        bool deletes = false;
        for (const auto& op : ops) {
          if (op.input.key != key) continue;
          if (is_write(op) && *op.complete < get.invoke) written = true;
          if ((op.input.call == lin::KvCall::Delete || op.input.call == lin::KvCall::DeleteIfVersion) &&
              op.invoke <= *get.complete) {
            deletes = true;
          }
        }
        if (written && !deletes) {
          get.output = lin::KvOutput::not_found();
          return key;
        }
        break;
      }
    }
  }
  return std::nullopt;
}

}  // namespace lin_test
