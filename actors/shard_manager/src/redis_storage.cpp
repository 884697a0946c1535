// RedisStorage (see redis_storage.hpp): one hash, saved by one compare-and-set Lua script.
#include <elfin/actors/shard_manager/redis_storage.hpp>

#include <hiredis.h>

#include <sys/time.h>
#include <charconv>
#include <string_view>

#include <fmt/format.h>

namespace elfin::actors::shard_manager {

namespace {

// KEYS[1] the hash; ARGV[1] the new revision; ARGV[2] the state. Atomic in Redis.
constexpr const char* kSaveScript =
    "local r = redis.call('HGET', KEYS[1], 'revision') "
    "if r and tonumber(r) >= tonumber(ARGV[1]) then return redis.error_reply('CONFLICT ' .. r) end "
    "redis.call('HSET', KEYS[1], 'revision', ARGV[1], 'state', ARGV[2]) "
    "return 'OK'";

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

}  // namespace

struct RedisStorage::Connection {
  redisContext* context = nullptr;
  ~Connection() {
    if (context != nullptr) redisFree(context);
  }
};

RedisStorage::RedisStorage(RedisOptions options) : options_(std::move(options)) {}
RedisStorage::~RedisStorage() = default;

Result<RedisStorage::Connection*, StorageError> RedisStorage::connection() {
  if (connection_) return connection_.get();
  auto fresh = std::make_unique<Connection>();
  fresh->context = redisConnectWithTimeout(options_.host.c_str(), options_.port, to_timeval(options_.timeout));
  if (fresh->context == nullptr) {
    return Err{StorageError{StorageErrorKind::Unavailable, "redis: cannot allocate a connection"}};
  }
  if (fresh->context->err != 0) {
    return Err{StorageError{StorageErrorKind::Unavailable,
                            fmt::format("redis {}:{}: {}", options_.host, options_.port, fresh->context->errstr)}};
  }
  redisSetTimeout(fresh->context, to_timeval(options_.timeout));
  connection_ = std::move(fresh);
  return connection_.get();
}

Result<std::optional<StoredState>, StorageError> RedisStorage::load() {
  auto conn = connection();
  if (!conn) return Err{conn.error()};
  Reply reply{static_cast<redisReply*>(
      redisCommand((*conn)->context, "HMGET %b revision state", options_.key.data(), options_.key.size()))};
  if (!reply) {
    StorageError error{StorageErrorKind::Unavailable, fmt::format("redis: {}", (*conn)->context->errstr)};
    connection_.reset();  // reopened by the next call
    return Err{std::move(error)};
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    return Err{StorageError{StorageErrorKind::Io, fmt::format("redis: {}", std::string_view{reply->str, reply->len})}};
  }
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2) {
    return Err{StorageError{StorageErrorKind::Corrupt, "redis: unexpected reply to HMGET"}};
  }
  const redisReply* revision = reply->element[0];
  const redisReply* state = reply->element[1];
  if (revision->type == REDIS_REPLY_NIL && state->type == REDIS_REPLY_NIL) return std::optional<StoredState>{};
  if (revision->type != REDIS_REPLY_STRING || state->type != REDIS_REPLY_STRING) {
    return Err{
        StorageError{StorageErrorKind::Corrupt, fmt::format("redis: {} lacks `revision` or `state`", options_.key)}};
  }
  auto decoded = decode_state(std::string_view{state->str, state->len});
  if (!decoded) return Err{decoded.error()};
  std::uint64_t stored_revision = 0;
  const std::string_view text{revision->str, revision->len};
  if (std::from_chars(text.data(), text.data() + text.size(), stored_revision).ec != std::errc{} ||
      stored_revision != decoded->revision) {
    return Err{StorageError{
        StorageErrorKind::Corrupt,
        fmt::format("redis: {} revision `{}` does not match its state's {}", options_.key, text, decoded->revision)}};
  }
  return std::optional<StoredState>{std::move(decoded).value()};
}

Result<void, StorageError> RedisStorage::save(const StoredState& state) {
  auto conn = connection();
  if (!conn) return Err{conn.error()};
  const std::string bytes = encode_state(state);
  const std::string revision = std::to_string(state.revision);
  Reply reply{static_cast<redisReply*>(redisCommand((*conn)->context, "EVAL %s 1 %b %b %b", kSaveScript,
                                                    options_.key.data(), options_.key.size(), revision.data(),
                                                    revision.size(), bytes.data(), bytes.size()))};
  if (!reply) {
    // The script may or may not have run; the revision check makes a retry safe either way.
    StorageError error{StorageErrorKind::Unavailable, fmt::format("redis: {}", (*conn)->context->errstr)};
    connection_.reset();
    return Err{std::move(error)};
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    const std::string_view text{reply->str, reply->len};
    if (text.starts_with("CONFLICT")) {
      return Err{StorageError{StorageErrorKind::Conflict, fmt::format("redis {} holds revision {}, not older than {}",
                                                                      options_.key, text.substr(9), state.revision)}};
    }
    return Err{StorageError{StorageErrorKind::Io, fmt::format("redis: {}", text)}};
  }
  return {};
}

std::string RedisStorage::describe() const {
  return fmt::format("redis {}:{} key {}", options_.host, options_.port, options_.key);
}

}  // namespace elfin::actors::shard_manager
