// Handshake: what two nodes say to each other before any message, as a state machine without sockets.
//
// Both sides send Hello at once (`start()`); on the peer's Hello each checks the version and the node
// number, then sends Auth; on the peer's Auth each checks the proof of the cluster secret. With a secret,
// the proof is HMAC-SHA256(secret, transcript) where the transcript binds both Hellos (nonces included)
// and the direction, so a mac can be neither replayed in another connection nor reflected back. The
// handshake proves that the peer knows the secret; it does not encrypt anything (see the guide's
// "Security" chapter). The secret never appears in a frame, a reason or a log line.
//
// Thread safety: distinct objects are safe; one object belongs to one connection.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <elfin/network/frame.hpp>

namespace elfin::network {

/// Who this node is, as told in its Hello.
struct NodeIdentity {
  std::uint16_t node_no = 0;
  std::uint64_t launch_id = 0;
  std::string node_name;
  std::uint32_t max_frame_size = kDefaultMaxFrameSize;
};

class Handshake {
 public:
  /// Waiting for more frames from the peer.
  struct InProgress {};
  /// Both sides are satisfied; `peer` is the peer's Hello (its node number, launch id, name, limits).
  struct Established {
    Hello peer;
  };
  /// The connection must close. `reason` is for this node's log line; `refuse_frame` holds the bytes of
  /// a Refuse frame to send before closing (empty when the peer refused first, or there is nothing to
  /// tell it).
  struct Refused {
    std::string reason;
    std::string refuse_frame;
  };
  using State = std::variant<InProgress, Established, Refused>;

  struct [[nodiscard]] Step {
    std::string send;  ///< bytes to send to the peer now (possibly empty)
    State state;
  };

  /// Draws this side's nonce from OpenSSL's RAND_bytes (throws std::runtime_error if the CSPRNG fails,
  /// which leaves nothing safe to do). `secret`: the cluster secret, or nullopt for none; this node
  /// proves it. `also_accepted`: secrets a peer may prove instead (during a rotation, the old or the
  /// next one); never sent, ignored without a `secret`.
  Handshake(NodeIdentity self, std::optional<std::string> secret, std::vector<std::string> also_accepted = {});
  Handshake(const Handshake&) = delete;
  Handshake& operator=(const Handshake&) = delete;
  Handshake(Handshake&&) noexcept = default;
  Handshake& operator=(Handshake&&) noexcept = default;
  ~Handshake();

  /// The bytes of this node's Hello, to send first (before reading anything).
  [[nodiscard]] std::string start();
  /// Feeds a frame received during the handshake. If `start()` was not called yet, `send` begins with
  /// the Hello. After Established or Refused, every call returns Refused (the handshake is over).
  [[nodiscard]] Step on_frame(const Frame& frame);
  /// Feeds a frame the reader could not decode: the handshake refuses (a peer that cannot say Hello
  /// properly is not talked to).
  [[nodiscard]] Step on_error(const FrameError& error);

  [[nodiscard]] const State& state() const { return state_; }
  [[nodiscard]] const Hello& own_hello() const { return own_; }

 private:
  Step refuse(std::string reason);
  [[nodiscard]] bool proves_a_secret(const std::vector<std::uint8_t>& peer_mac) const;
  [[nodiscard]] static std::array<std::uint8_t, kMacSize> mac(const std::string& key, const Hello& from,
                                                              const Hello& to);

  enum class Phase : std::uint8_t { AwaitHello, AwaitAuth, Done };

  Hello own_;
  std::optional<std::string> secret_;
  std::vector<std::string> also_accepted_;
  std::optional<Hello> peer_;
  Phase phase_ = Phase::AwaitHello;
  bool started_ = false;
  State state_;
};

}  // namespace elfin::network
