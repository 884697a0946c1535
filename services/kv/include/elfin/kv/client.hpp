// elfin::kv::Client: a program's handle on a KV cluster. It joins the cluster as a light node
// (elfin::network::LightNode: only system.network and remote groups fronting the pods' KV fronts)
// and sends each request for a key to the pod whose replica leads the key's shard, so no front
// forwards it to another pod:
//
//   - every answer names the node that led the shard (and the fronts' shard count), and the
//     client keeps that per shard;
//   - at connect it asks each connected pod's front for the leaders it knows (kv.Leaders);
//   - a shard whose leader it does not know goes to the first connected pod, whose front finds
//     the leader, and the answer names it.
//
// A leader that changed costs at most one forward (the old leader's front follows its replica's
// NotLeader hint) or, when the leader's pod is gone, one retry through another pod; both within
// the call's deadline. Scans and stale reads go to the first connected pod.
//
//   auto client = elfin::kv::Client::connect({.pods = {"tcp://127.0.0.1:9501", "tcp://127.0.0.1:9502",
//                                                      "tcp://127.0.0.1:9503"}});
//   if (!client) { fmt::print(stderr, "{}\n", client.error()); return 1; }
//   auto put = client->put("user:42", "alice");        // Result<Written, KvError>
//   auto got = client->get("user:42");                  // Found{found, value, version}
//   auto cas = client->cas("user:42", "bob", put->version);
//
// Each call blocks until the answer or `timeout` (a scan over every shard: at least 40 s, as the
// front gives it `scan_timeout`). A call whose pod went away before answering is sent again to
// the first connected pod (Put, Delete and reads; a write carries a request id of this client's,
// so the shard applies it once however often it is sent), except Cas and DeleteIfVersion, which
// answer Timeout: their outcome is unknown. A request that reached no pod at all (none connected
// at that moment) was applied nowhere: any call sends it again.
//
// Thread safety: calls from any threads, concurrently: each call is one request in flight, and the
// calls of many threads share the node's connections and the leader table (N threads, N requests
// in flight). Moving or destroying the client only once no call is running.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <elfin/protocols/kv.hpp>
#include <elfin/result.hpp>

namespace elfin::kv {

struct ClientOptions {
  /// The pods' network addresses, "tcp://HOST:PORT".
  std::vector<std::string> pods{};
  /// The pods' node numbers (default 1..pods.size()).
  std::vector<std::uint16_t> pod_nodes{};
  /// This light node's number, unique in the cluster; 0: one derived from the process id.
  std::uint16_t node = 0;
  std::optional<std::string> secret{};
  /// How long a call may take, waiting for a connection included.
  std::chrono::milliseconds timeout{10'000};
};

class Client {
 public:
  /// Starts the light node, waits (up to `timeout`) until a pod is connected, and asks the
  /// connected pods for their leader tables (up to 2 s more).
  [[nodiscard]] static Result<Client, std::string> connect(ClientOptions options);

  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();

  using KvError = protocols::kv::KvError;
  [[nodiscard]] Result<protocols::kv::Written, KvError> put(std::string key, std::string value);
  [[nodiscard]] Result<protocols::kv::Found, KvError> get(std::string key, bool stale = false);
  [[nodiscard]] Result<protocols::kv::Deleted, KvError> remove(std::string key);
  [[nodiscard]] Result<protocols::kv::Written, KvError> cas(std::string key, std::string value,
                                                            protocols::kv::Version expected_version);
  [[nodiscard]] Result<protocols::kv::Deleted, KvError> delete_if_version(std::string key,
                                                                          protocols::kv::Version expected_version);
  [[nodiscard]] Result<protocols::kv::Scanned, KvError> scan(protocols::kv::Scan request);

  /// The node number this client joined as.
  [[nodiscard]] std::uint16_t node() const;

  struct Impl;

 private:
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace elfin::kv
