#include <elfin/network/handshake.hpp>

#include <stdexcept>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace elfin::network {

namespace {

// The transcript a mac covers. The label pins the protocol version and purpose; the sender's Hello
// fields come first and the receiver's second, so A's mac for A->B differs from B's for B->A even with
// one secret (no reflection), and both fresh nonces make every connection's macs new (no replay).
// Fixed-size fields and a length-prefixed name keep the encoding unambiguous.
constexpr std::string_view kAuthLabel = "elfin-auth-v1";

void append_le(std::string& out, std::uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) out.push_back(static_cast<char>(static_cast<std::uint8_t>(value >> (8 * i))));
}

void append_hello(std::string& out, const Hello& h) {
  append_le(out, h.node_no, 2);
  append_le(out, h.launch_id, 8);
  append_le(out, h.capabilities, 4);
  append_le(out, h.max_frame_size, 4);
  out.append(reinterpret_cast<const char*>(h.nonce.data()), h.nonce.size());
  append_le(out, h.node_name.size(), 1);  // node names are at most 255 bytes (the encoder checks)
  out.append(h.node_name);
}

std::string frame_bytes(const Frame& frame) {
  std::string out;
  encode(frame, out);
  return out;
}

}  // namespace

Handshake::Handshake(NodeIdentity self, std::optional<std::string> secret, std::vector<std::string> also_accepted)
    : secret_(std::move(secret)), also_accepted_(std::move(also_accepted)), state_(InProgress{}) {
  own_.version = kProtocolVersion;
  own_.node_no = self.node_no;
  own_.launch_id = self.launch_id;
  own_.capabilities = 0;
  own_.max_frame_size = self.max_frame_size;
  own_.node_name = std::move(self.node_name);
  if (RAND_bytes(own_.nonce.data(), static_cast<int>(own_.nonce.size())) != 1) {
    throw std::runtime_error("the handshake cannot draw a nonce: OpenSSL's RAND_bytes failed");
  }
}

Handshake::~Handshake() {
  // NOLINTNEXTLINE(clang-analyzer-cplusplus.InnerPointer): nothing reallocates the string here
  if (secret_ && !secret_->empty()) OPENSSL_cleanse(secret_->data(), secret_->size());
  for (std::string& s : also_accepted_) {
    if (!s.empty()) OPENSSL_cleanse(s.data(), s.size());
  }
}

std::string Handshake::start() {
  started_ = true;
  return frame_bytes(own_);
}

std::array<std::uint8_t, kMacSize> Handshake::mac(const std::string& key, const Hello& from, const Hello& to) {
  std::string transcript(kAuthLabel);
  append_hello(transcript, from);
  append_hello(transcript, to);
  std::array<std::uint8_t, kMacSize> out{};
  unsigned int len = 0;
  const unsigned char* ok =
      HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(transcript.data()), transcript.size(), out.data(), &len);
  if (ok == nullptr || len != kMacSize) throw std::runtime_error("the handshake cannot compute HMAC-SHA256 (OpenSSL)");
  return out;
}

bool Handshake::proves_a_secret(const std::vector<std::uint8_t>& peer_mac) const {
  if (peer_mac.size() != kMacSize || !secret_ || !peer_) return false;
  // Every candidate is checked (no early exit), so timing does not tell which secret matched.
  bool matched = false;
  auto check = [&](const std::string& key) {
    const auto expected = mac(key, *peer_, own_);
    matched |= CRYPTO_memcmp(expected.data(), peer_mac.data(), kMacSize) == 0;
  };
  check(*secret_);
  for (const std::string& key : also_accepted_) check(key);
  return matched;
}

Handshake::Step Handshake::refuse(std::string reason) {
  phase_ = Phase::Done;
  Refused refused{std::move(reason), {}};
  encode(Refuse{refused.reason}, refused.refuse_frame);
  state_ = refused;
  return Step{{}, std::move(refused)};
}

Handshake::Step Handshake::on_error(const FrameError& error) {
  if (phase_ == Phase::Done) return Step{{}, Refused{"the handshake is over", {}}};
  return refuse(fmt::format("handshake {}", error));
}

Handshake::Step Handshake::on_frame(const Frame& frame) {
  if (phase_ == Phase::Done) return Step{{}, Refused{"the handshake is over", {}}};
  std::string send = started_ ? std::string() : start();

  if (const auto* refuse_frame = std::get_if<Refuse>(&frame)) {
    phase_ = Phase::Done;
    Refused refused{fmt::format("refused by peer: {}", refuse_frame->reason), {}};
    state_ = refused;
    return Step{{}, std::move(refused)};
  }

  if (phase_ == Phase::AwaitHello) {
    const auto* hello = std::get_if<Hello>(&frame);
    if (hello == nullptr) {
      return refuse(fmt::format("unexpected {} frame during the handshake (expected Hello)",
                                kind_name(static_cast<std::uint8_t>(kind_of(frame)))));
    }
    if (hello->version != kProtocolVersion) {
      return refuse(
          fmt::format("version mismatch: peer speaks {}, this node speaks {}", hello->version, kProtocolVersion));
    }
    if (hello->node_no == own_.node_no) {
      return refuse(fmt::format("peer has the same node number {} as this node", hello->node_no));
    }
    peer_ = *hello;
    phase_ = Phase::AwaitAuth;
    Auth auth;
    if (secret_) {
      const auto m = mac(*secret_, own_, *peer_);
      auth.mac.assign(m.begin(), m.end());
    }
    encode(auth, send);
    return Step{std::move(send), InProgress{}};
  }

  // Phase::AwaitAuth
  const auto* auth = std::get_if<Auth>(&frame);
  if (auth == nullptr) {
    return refuse(fmt::format("unexpected {} frame during the handshake (expected Auth)",
                              kind_name(static_cast<std::uint8_t>(kind_of(frame)))));
  }
  if (secret_ && auth->mac.empty()) return refuse("peer sent no authentication but this node requires a secret");
  if (!secret_ && !auth->mac.empty()) return refuse("peer authenticates but this node has no secret configured");
  if (secret_ && !proves_a_secret(auth->mac)) return refuse("authentication failed: wrong secret");
  phase_ = Phase::Done;
  state_ = Established{*peer_};
  return Step{std::move(send), Established{*peer_}};
}

}  // namespace elfin::network
