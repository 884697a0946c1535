// Reports of a linearizability check as text.
#include <elfin/linearizability/check_result.hpp>

#include <string>

namespace elfin::linearizability {

const char* to_string(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::Ok:
      return "ok";
    case Verdict::Violation:
      return "violation";
    case Verdict::Unknown:
      return "unknown";
  }
  return "?";
}

std::string to_string(const OperationView& op) {
  std::string out = "#" + std::to_string(op.index) + " client " + std::to_string(op.client) + " [" +
                    std::to_string(op.invoke) + ", " + (op.complete ? std::to_string(*op.complete) : "no answer") +
                    "] " + op.what;
  return out;
}

std::string Violation::explain() const {
  std::string out = "key `" + key + "` is not linearizable.\n";
  if (linearized_count == 0) {
    out += "  No operation can come first.\n";
  } else {
    out += "  The longest legal order found has " + std::to_string(linearized_count) + " operation(s); it ends with:\n";
    for (const auto& op : linearized) out += "    " + to_string(op) + "\n";
  }
  out += "  leaving the state " + state + ";\n";
  out += "  then this operation, already answered, cannot come next:\n    " + to_string(blocked) + "\n";
  if (!candidates.empty()) {
    out += "  nor does putting one of these before it help:\n";
    for (const auto& op : candidates) out += "    " + to_string(op) + "\n";
  }
  return out;
}

std::string CheckResult::summary() const {
  std::string out = std::string(to_string(verdict)) + ": " + std::to_string(keys) + " key(s), " +
                    std::to_string(operations) + " operation(s) (" + std::to_string(pending) + " pending), " +
                    std::to_string(steps) + " search step(s)";
  if (!unknown_keys.empty()) {
    out += "; " + std::to_string(unknown_keys.size()) + " key(s) ran out of budget:";
    for (std::size_t i = 0; i < unknown_keys.size() && i < 10; ++i) out += " `" + unknown_keys[i] + "`";
  }
  out += "\n";
  for (const auto& v : violations) out += v.explain();
  return out;
}

}  // namespace elfin::linearizability
