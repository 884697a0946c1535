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
// Each call answers by `timeout` at the latest (a scan over every shard: at least 40 s, as the
// front gives it `scan_timeout`). A call whose pod went away before answering is sent again to
// the first connected pod (Put, Delete and reads; a write carries a request id of this client's,
// so the shard applies it once however often it is sent), except Cas and DeleteIfVersion, which
// answer Timeout: their outcome is unknown. A request that reached no pod at all (none connected
// at that moment) was applied nowhere: any call sends it again.
//
// Many requests in flight from one thread: each operation has an `async_*` form that returns at
// once (after the first send) with a std::future; the blocking form is `async_*(...).get()`.
//
//   std::vector<std::future<elfin::Result<elfin::protocols::kv::Written, Client::KvError>>> puts;
//   for (int i = 0; i < 100; ++i) puts.push_back(client->async_put(fmt::format("k{}", i), "v"));
//   for (auto& put : puts) if (!put.get()) ...;
//
// A future, not a completion callback: answers arrive on the client node's network and timer
// threads, which every request shares, and a callback that blocked there (or waited for another
// answer) would stall them all; a future leaves the waiting to the caller's thread, and composes
// with the blocking calls. Re-sends run on one retry thread of the client's.
//
// At most `ClientOptions::max_in_flight` calls (blocking and async together) are in flight; a call
// past that answers Unavailable at once ("... requests in flight already"), sent nowhere.
// Destroying the client with calls in flight answers each of them (Unavailable) before it
// returns; their futures stay valid.
//
// Thread safety: calls from any threads, concurrently; the calls share the node's connections and
// the leader table. Moving or destroying the client only once no call is being made.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
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
  /// Calls in flight at most (blocking and async together); one past it answers Unavailable at once.
  std::size_t max_in_flight = 4096;
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

  /// The same calls, answered through a future (ready by the call's deadline at the latest).
  template <class T>
  using Future = std::future<Result<T, KvError>>;
  [[nodiscard]] Future<protocols::kv::Written> async_put(std::string key, std::string value);
  [[nodiscard]] Future<protocols::kv::Found> async_get(std::string key, bool stale = false);
  [[nodiscard]] Future<protocols::kv::Deleted> async_remove(std::string key);
  [[nodiscard]] Future<protocols::kv::Written> async_cas(std::string key, std::string value,
                                                         protocols::kv::Version expected_version);
  [[nodiscard]] Future<protocols::kv::Deleted> async_delete_if_version(std::string key,
                                                                       protocols::kv::Version expected_version);
  [[nodiscard]] Future<protocols::kv::Scanned> async_scan(protocols::kv::Scan request);

  /// The node number this client joined as.
  [[nodiscard]] std::uint16_t node() const;

  struct Impl;

 private:
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace elfin::kv
