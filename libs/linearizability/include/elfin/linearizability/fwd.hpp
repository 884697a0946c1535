// Forward declarations of elfin::linearizability's types, for headers that only name them.
#pragma once

namespace elfin::linearizability {

template <class Input, class Output>
struct Operation;
template <class Input, class Output>
struct History;
template <class Input, class Output>
class Recorder;
struct CheckOptions;
struct CheckResult;
struct Violation;
struct KvInput;
struct KvOutput;
struct KvState;
class KvModel;

}  // namespace elfin::linearizability
