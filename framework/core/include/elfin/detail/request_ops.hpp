// RequestOps: what the network needs to carry a request of a type it does not know — a state
// that answers a requester on another node, and the answers encoded as msgpack both ways.
//
// A request arriving from another node is delivered locally with a RemoteRequestState: the local
// recipients answer it as usual, and once the last answer is in, the state hands the encoded
// answers to the network. On the requester's node, the answers coming back are decoded into the
// requester's own RequestState, which counts them like local ones.
//
// Thread safety: as RequestState.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <msgpack.hpp>

#include <elfin/detail/request_state.hpp>
#include <elfin/evolution.hpp>

namespace elfin::detail {

enum class AnswerStatus : std::uint8_t { Ok, Failed, Ignored };

/// One answer on its way to another node (`payload`: the response value's msgpack for Ok, the
/// reason for Failed).
struct EncodedAnswer {
  AnswerStatus status = AnswerStatus::Failed;
  std::string payload;
};
/// One answer as received from another node (views into the frame).
struct AnswerView {
  AnswerStatus status = AnswerStatus::Failed;
  std::string_view payload;
};

using RemoteDone = std::function<void(RequestStateBase&)>;

struct RequestOps {
  /// A state for a request that arrived from another node; `done` runs once, when every local
  /// recipient has answered (or none could be reached).
  std::shared_ptr<RequestStateBase> (*make_remote_state)(bool all, RemoteDone done);
  /// The answers of a completed state made by `make_remote_state`: one for "any", each for "all".
  std::vector<EncodedAnswer> (*take_answers)(RequestStateBase& state);
  /// Applies answers from another node to a local requester's state, on which the caller holds
  /// exactly one delivery. An Ok answer that does not decode counts as Failed; the text says why.
  std::optional<std::string> (*apply_answers)(RequestStateBase& state, std::span<const AnswerView> answers,
                                              TraceId trace);
};

template <class T>
class RemoteRequestState final : public RequestState<T> {
 public:
  RemoteRequestState(bool all, RemoteDone done) : RequestState<T>(all, Waker{}), done_(std::move(done)) {}

 private:
  void on_complete(Waker /*unused: nobody waits locally*/) override {
    if (auto done = std::move(done_)) done(*this);
  }
  RemoteDone done_;
};

template <class T>
[[nodiscard]] EncodedAnswer encode_answer(const Result<T, RequestError>& answer) {
  if (!answer) {
    if (answer.error() == RequestError::Ignored) return {AnswerStatus::Ignored, {}};
    return {AnswerStatus::Failed, answer.error().reason()};
  }
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  pack_value(packer, answer.value());
  return {AnswerStatus::Ok, std::string(buffer.data(), buffer.size())};
}

template <class T>
[[nodiscard]] T decode_answer(std::string_view payload) {
  msgpack::object_handle handle = msgpack::unpack(payload.data(), payload.size());
  T value{};
  decode_value(handle.get(), value);
  return value;
}

template <class T>
const RequestOps* request_ops_for() noexcept {
  static const RequestOps ops{
      .make_remote_state = [](bool all, RemoteDone done) -> std::shared_ptr<RequestStateBase> {
        return std::make_shared<RemoteRequestState<T>>(all, std::move(done));
      },
      .take_answers =
          [](RequestStateBase& base) {
            auto& state = static_cast<RequestState<T>&>(base);
            std::vector<EncodedAnswer> out;
            if (state.is_all()) {
              for (const auto& answer : state.take_all()) out.push_back(encode_answer(answer));
            } else {
              out.push_back(encode_answer(state.take_any()));
            }
            return out;
          },
      .apply_answers = [](RequestStateBase& base, std::span<const AnswerView> answers,
                          TraceId trace) -> std::optional<std::string> {
        auto& state = static_cast<RequestState<T>&>(base);
        if (answers.empty()) {
          state.fail(RequestError{RequestError::Failed, std::string(kReachedNoOne)});
          return std::nullopt;
        }
        for (std::size_t i = 1; i < answers.size(); ++i) state.add_delivery();
        std::optional<std::string> problem;
        for (const auto& answer : answers) {
          switch (answer.status) {
            case AnswerStatus::Ok:
              try {
                state.respond(decode_answer<T>(answer.payload), trace);
              } catch (const std::exception& e) {
                problem = fmt::format("a response does not decode: {}", e.what());
                state.fail(RequestError{RequestError::Failed, *problem});
              }
              break;
            case AnswerStatus::Ignored:
              state.fail(RequestError::Ignored);
              break;
            case AnswerStatus::Failed:
              state.fail(RequestError{RequestError::Failed, std::string(answer.payload)});
              break;
          }
        }
        return problem;
      },
  };
  return &ops;
}

}  // namespace elfin::detail
