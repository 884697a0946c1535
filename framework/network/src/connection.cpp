#include "connection.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <fmt/format.h>
#include <array>
#include <asio/post.hpp>
#include <asio/write.hpp>
#include <cerrno>
#include <system_error>
#include <tuple>
#include <utility>

#include <elfin/any_message.hpp>
#include <elfin/detail/envelope_block.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/send_op.hpp>

#include "network_state.hpp"

namespace elfin::network::detail {

namespace {

using Clock = std::chrono::steady_clock;

std::string endpoint_text(const asio::ip::tcp::socket& socket) {
  std::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  return ec ? std::string("?") : fmt::format("{}:{}", ep.address().to_string(), ep.port());
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

}  // namespace

Connection::Connection(NetworkState& net, asio::ip::tcp::socket socket, bool outgoing)
    : net_(net),
      socket_(std::move(socket)),
      timer_(net.io()),
      outgoing_(outgoing),
      address_(endpoint_text(socket_)),
      handshake_(net.identity(), net.config().secret, net.config().also_accepted_secrets),
      reader_(static_cast<std::uint32_t>(net.config().max_frame_size.bytes)) {
  std::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  fd_ = socket_.native_handle();
}

Connection::~Connection() = default;

void Connection::start() {
  last_received_ = Clock::now();
  opened_at_ = last_received_;
  write_now(handshake_.start());
  start_timer();
  read_some();
}

// --- writing ---------------------------------------------------------------------------------

void Connection::write_now(std::string bytes) {
  std::unique_lock lock(out_mu_);
  if (out_closed_) return;
  out_.append(bytes);
  start_writing(lock);
}

void Connection::send_frame(const Frame& frame) {
  std::unique_lock lock(out_mu_);
  if (out_closed_) return;
  out_.append_with([&frame](std::string& tail) { encode(frame, tail); });
  start_writing(lock);
}

namespace {
/// Queued bytes up to this size may be written by the thread that queued them; more go to the I/O
/// thread, so a thread never spends long in `send`.
constexpr std::size_t kDirectWriteMaxBytes = std::size_t{16} * 1024;

/// One non-blocking gathering `sendmsg` of `queue` from its byte `from` on (what earlier calls
/// of the same write took is skipped).
ssize_t send_some(int fd, const OutQueue& queue, std::size_t from) {
  static constexpr std::size_t kMaxBuffers = 64;
  std::array<iovec, kMaxBuffers> iov{};
  std::size_t count = 0;
  queue.for_each_buffer([&](const char* data, std::size_t size) {
    if (count == kMaxBuffers) return;
    if (from >= size) {
      from -= size;
      return;
    }
    // sendmsg reads the buffers; iovec's field is not const only for readv's sake.
    iov[count].iov_base = const_cast<char*>(data + from);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    iov[count].iov_len = size - from;
    from = 0;
    ++count;
  });
  msghdr message{};
  message.msg_iov = iov.data();
  message.msg_iovlen = count;
  return ::sendmsg(fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
}
}  // namespace

void Connection::start_writing(std::unique_lock<std::mutex>& lock, bool direct) {
  if (writer_ != Writer::None || out_.empty()) return;  // the writer at work takes these bytes too
  if (!direct || out_.bytes() > kDirectWriteMaxBytes) {
    hand_to_io_thread();
    return;
  }
  // Nobody writes: this thread does, now, instead of waking the I/O thread (two thread switches
  // on every round trip). The Direct role keeps everyone else to appending, so the bytes leave
  // in the order they were queued.
  writer_ = Writer::Direct;
  swap(direct_buf_, out_);
  write_directly(lock);
}

void Connection::write_directly(std::unique_lock<std::mutex>& lock) {
  // At most this many writes in a row on the caller's thread (more frames queued while it wrote
  // are taken along); then the I/O thread goes on, so a sender is never held long.
  static constexpr int kMaxDirectWrites = 4;
  for (int writes = 1;; ++writes) {
    lock.unlock();
    std::size_t written = 0;
    int error = 0;
    {
      std::lock_guard fd_lock(fd_mu_);
      if (fd_closed_) {
        error = EBADF;
      } else {
        while (written < direct_buf_.bytes()) {
          const ssize_t n = send_some(fd_, direct_buf_, written);
          if (n > 0) {
            written += static_cast<std::size_t>(n);
          } else if (n < 0 && errno == EINTR) {
            continue;
          } else {
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) error = errno;
            break;  // the socket's buffer is full (or broken)
          }
        }
      }
    }
    if (written > 0) count_written(written);
    lock.lock();
    if (error != 0 || out_closed_) {
      // Nobody writes any more (writer_ stays taken): the connection is closing, and close fails
      // the requests whose frames never left, as it does for a failed asynchronous write.
      direct_buf_.clear();
      if (error != 0 && error != EBADF) {
        lock.unlock();
        close(fmt::format("write failed: {}", std::error_code(error, std::system_category()).message()));
        lock.lock();
      }
      return;
    }
    if (written < direct_buf_.bytes()) {
      // The socket takes no more now: what is left goes first, then what was queued meanwhile,
      // written by the I/O thread when the socket can take it.
      direct_buf_.consume(written);
      direct_buf_.splice(out_);
      swap(out_, direct_buf_);
      hand_to_io_thread();
      return;
    }
    direct_buf_.clear();
    if (out_.empty()) {
      writer_ = Writer::None;
      return;
    }
    if (writes == kMaxDirectWrites || out_.bytes() > kDirectWriteMaxBytes) {
      hand_to_io_thread();
      return;
    }
    swap(direct_buf_, out_);
  }
}

void Connection::hand_to_io_thread() {
  writer_ = Writer::Io;
  asio::post(net_.io(), [self = shared_from_this()] { self->do_write(); });
}

void Connection::do_write() {
  {
    std::lock_guard lock(out_mu_);
    if (out_.empty() || out_closed_) {
      if (!out_closed_) writer_ = Writer::None;
      return;
    }
    swap(write_buf_, out_);
  }
  write_iov_.clear();
  write_buf_.for_each_buffer([this](const char* data, std::size_t size) { write_iov_.emplace_back(data, size); });
  asio::async_write(socket_, write_iov_, [self = shared_from_this()](std::error_code ec, std::size_t n) {
    self->write_buf_.clear();
    self->count_written(n);
    if (ec) {
      // writer_ stays taken: nobody writes to a failed socket (see write_directly).
      self->close(fmt::format("write failed: {}", ec.message()));
      return;
    }
    self->do_write();
  });
}

std::shared_ptr<TxFlow> Connection::open_flow() {
  std::lock_guard lock(flows_mu_);
  return open_flow_locked();
}

std::shared_ptr<TxFlow> Connection::callers_flow() {
  std::lock_guard lock(flows_mu_);
  if (!callers_flow_) callers_flow_ = open_flow_locked();
  return callers_flow_;
}

std::shared_ptr<TxFlow> Connection::open_flow_locked() {
  auto flow = std::make_shared<TxFlow>(next_flow_++);
  if (closed()) flow->close();
  tx_flows_.emplace(flow->id(), flow);
  return flow;
}

Result<void, std::string> Connection::encode_envelope(Envelope& envelope, const TxFlow& flow, std::uint8_t group_no,
                                                      std::string& out) {
  const MessageVTable& vtable = envelope.vtable();
  auto* block = elfin::detail::EnvelopeAccess::block(envelope);
  MessageFrame header;
  header.flow_id = flow.id();
  header.sender = envelope.sender().raw();
  header.trace_id = envelope.trace_id().raw();
  header.protocol = vtable.protocol;
  header.name = vtable.name;
  if (group_no == 0) {
    header.direct = true;
    header.recipient = block->recipient.raw();
  } else {
    header.group_no = group_no;
  }
  // A request someone waits for: remember its state before the frame can leave, so the Response
  // never arrives first. From here the connection carries the obligation to answer (if it closes
  // before the frame leaves, `close` fails the request like any other pending one).
  const bool awaited = envelope.kind() == MessageKind::Request && elfin::detail::EnvelopeAccess::obligated(envelope) &&
                       block->request && vtable.request_ops != nullptr;
  if (awaited) {
    std::lock_guard lock(pending_mu_);
    if (pending_closed_) return Err{std::string("connection closed")};
    header.request = true;
    header.request_all = block->request->is_all();
    header.request_id = next_request_++;
    pending_.emplace(header.request_id, Pending{block->request, vtable.request_ops});
    elfin::detail::EnvelopeAccess::discharge(envelope);
  }
  try {
    encode_message(header, out, [&](std::string& o) { vtable.pack(envelope.data(), o); });
    return {};
  } catch (const std::exception& e) {  // encode_message left `out` as it was
    if (awaited) fail_pending(header.request_id);
    return Err{fmt::format("cannot encode {}.{}: {}", vtable.protocol, vtable.name, e.what())};
  }
}

void Connection::fail_pending(std::uint64_t request_id) {
  std::shared_ptr<elfin::detail::RequestStateBase> state;
  {
    std::lock_guard lock(pending_mu_);
    if (auto it = pending_.find(request_id); it != pending_.end()) {
      state = std::move(it->second.state);
      pending_.erase(it);
    }
  }
  if (state)
    state->fail(RequestError{RequestError::Failed, fmt::format("node {} did not take the request", peer_.node_no)});
}

void Connection::send_encoded(std::string& frames, std::uint64_t messages, bool awaited) {
  if (frames.empty()) return;
  std::unique_lock lock(out_mu_);
  if (out_closed_) {
    frames.clear();  // requests among them were failed by close()
    return;
  }
  // One add per batch, not per message: forwarders on several workers share the peer's counter.
  if (traffic_) traffic_->add(traffic_->sent_messages, messages);
  out_.take(frames);
  start_writing(lock, awaited);
}

// --- reading ---------------------------------------------------------------------------------

void Connection::read_some() {
  auto buffer = reader_.prepare(std::max<std::size_t>(reader_.missing(), std::size_t{64} * 1024));
  socket_.async_read_some(asio::buffer(buffer.data(), buffer.size()),
                          [self = shared_from_this()](std::error_code ec, std::size_t n) {
                            if (ec) {
                              self->close(ec == asio::error::eof ? std::string("closed by peer")
                                                                 : fmt::format("read failed: {}", ec.message()));
                              return;
                            }
                            self->on_read(n);
                          });
}

void Connection::on_read(std::size_t n) {
  if (closed()) return;
  reader_.commit(n);
  last_received_ = Clock::now();
  // The read's bytes and the messages dispatch found in it are counted once, whichever way the
  // loop below ends (after dispatch: the handshake in this read may have named the peer).
  struct Tally {
    Connection& conn;
    std::size_t bytes;
    ~Tally() { conn.count_read(bytes, std::exchange(conn.received_in_read_, 0)); }
  } tally{*this, n};
  // One read carries many messages: the actors they wake are handed to the workers every
  // kFramesPerFlush frames rather than one by one (see ScheduleBatch).
  static constexpr unsigned kFramesPerFlush = 64;
  elfin::detail::ScheduleBatch batch(net_.system());
  for (unsigned frames = 1;; ++frames) {
    if (frames % kFramesPerFlush == 0) batch.flush();
    auto next = reader_.next();
    if (!next) {
      const FrameError& error = next.error();
      if (phase_ == Phase::Handshake) {
        on_handshake_step(handshake_.on_error(error));
        return;
      }
      if (error.fatal()) {
        close(fmt::format("frame {}: {}", error.frame_no, error.message));
        return;
      }
      on_bad_frame(error);
      continue;
    }
    auto& frame = next.value();
    if (!frame) break;  // need more bytes
    if (!dispatch(*frame)) return;
  }
  read_some();
}

bool Connection::dispatch(const Frame& frame) {
  switch (phase_) {
    case Phase::Handshake:
      on_handshake_step(handshake_.on_frame(frame));
      return !closed();
    case Phase::AwaitWelcome: {
      const auto* welcome = std::get_if<Welcome>(&frame);
      if (welcome == nullptr && (std::holds_alternative<Refuse>(frame) || std::holds_alternative<Bye>(frame))) {
        break;  // the peer turns us down after all (e.g. a duplicate node): handled below
      }
      if (welcome == nullptr) {
        close(fmt::format("protocol error: expected Welcome after the handshake, got {}",
                          kind_name(static_cast<std::uint8_t>(kind_of(frame)))));
        return false;
      }
      for (const auto& g : welcome->groups) peer_groups_.emplace(g.name, g.group_no);
      phase_ = Phase::Open;
      open_.store(true, std::memory_order_release);
      net_.opened(shared_from_this());
      send_ping();  // the round trip is known from the start, not one ping_interval later
      return true;
    }
    case Phase::Open:
      break;
  }
  if (const auto* m = std::get_if<MessageFrame>(&frame)) {
    ++received_in_read_;
    on_message(*m);
  } else if (const auto* r = std::get_if<ResponseFrame>(&frame)) {
    ++received_in_read_;
    on_response(*r);
  } else if (const auto* c = std::get_if<Credit>(&frame)) {
    on_credit(*c);
  } else if (const auto* p = std::get_if<Ping>(&frame)) {
    send_frame(Pong{p->token});
  } else if (const auto* pong = std::get_if<Pong>(&frame)) {
    on_pong(*pong);  // receiving it also counted as traffic (idle detection)
  } else if (const auto* bye = std::get_if<Bye>(&frame)) {
    close(fmt::format("peer said goodbye: {}", bye->reason));
    return false;
  } else if (const auto* refuse = std::get_if<Refuse>(&frame)) {
    std::string text =
        fmt::format("connection with node {} at {} refused by the peer: {}", peer_.node_no, address_, refuse->reason);
    if (refuse->reason.starts_with("duplicate connection")) {
      net_.log(LogLevel::Debug, text);
    } else {
      net_.refused(text);
    }
    close(std::move(text));
    return false;
  } else {
    net_.log(LogLevel::Warn,
             fmt::format("node {} ({}): frame {}: unexpected {} frame after the handshake, skipped", peer_.node_no,
                         address_, reader_.frames_read(), kind_name(static_cast<std::uint8_t>(kind_of(frame)))));
  }
  return true;
}

void Connection::on_handshake_step(Handshake::Step step) {
  if (!step.send.empty()) write_now(std::move(step.send));
  if (auto* refused = std::get_if<Handshake::Refused>(&step.state)) {
    if (!refused->refuse_frame.empty()) write_now(std::move(refused->refuse_frame));
    std::string text = fmt::format("connection with {} refused: {}", address_, refused->reason);
    net_.refused(text);
    close(std::move(text));
    return;
  }
  if (auto* established = std::get_if<Handshake::Established>(&step.state)) {
    peer_ = established->peer;
    reader_.set_max_frame_size(static_cast<std::uint32_t>(net_.config().max_frame_size.bytes));
    if (auto refusal = net_.admit(shared_from_this())) {
      std::string frame;
      encode(Refuse{*refusal}, frame);
      write_now(std::move(frame));
      std::string text = fmt::format("connection with node {} at {} refused: {}", peer_.node_no, address_, *refusal);
      // Settling a double connection between the same two nodes is routine, not an error.
      if (refusal->starts_with("duplicate connection")) {
        net_.log(LogLevel::Debug, text);
      } else {
        net_.refused(text);
      }
      close(std::move(text));
      return;
    }
    traffic_ = net_.traffic(peer_.node_no);
    traffic_->add(traffic_->sent_bytes, std::exchange(unattributed_written_, 0));
    traffic_->add(traffic_->received_bytes, std::exchange(unattributed_read_, 0));
    traffic_->add(traffic_->writes, std::exchange(unattributed_writes_, 0));
    phase_ = Phase::AwaitWelcome;
    send_frame(net_.welcome());
  }
}

void Connection::on_bad_frame(const FrameError& error) {
  net_.log(LogLevel::Warn,
           fmt::format("node {} ({}): frame {} skipped: {}", peer_.node_no, address_, error.frame_no, error.message));
  if (error.flow_id) acknowledge(*error.flow_id);
  if (error.request && error.request_id) {
    answer_failed(*error.request_id, 0,
                  fmt::format("node {} could not read the request: {}", net_.node_no(), error.message));
  }
}

void Connection::answer_failed(std::uint64_t request_id, std::uint64_t trace_id, std::string_view reason) {
  ResponseFrame response;
  response.request_id = request_id;
  response.trace_id = trace_id;
  response.items.push_back(ResponseItem{ResponseStatus::Failed, reason});
  send_response(response);
}

void Connection::send_response(const ResponseFrame& response) {
  std::unique_lock lock(out_mu_);
  if (out_closed_) return;  // counted only if queued, as in send_encoded
  if (traffic_) traffic_->add(traffic_->sent_messages, 1);
  out_.append_with([&response](std::string& tail) { encode(response, tail); });
  // Answered from an actor's run: the write waits for the run's end, where the run's other answers
  // on this connection join it. A worker that registered already writes them all; with a writer
  // at work these bytes are its anyway.
  if (writer_ == Writer::None) {
    if (!flush_pending_) flush_pending_ = elfin::detail::flush_after_run(shared_from_this());
    if (flush_pending_) return;
  }
  start_writing(lock);
}

void Connection::flush_after_run() {
  std::unique_lock lock(out_mu_);
  flush_pending_ = false;
  if (out_closed_) return;
  start_writing(lock);
}

void Connection::count_written(std::size_t bytes) {
  if (traffic_) {
    traffic_->add(traffic_->sent_bytes, bytes);
    traffic_->add(traffic_->writes, 1);
  } else {
    unattributed_written_ += bytes;
    ++unattributed_writes_;
  }
}

void Connection::count_read(std::size_t bytes, std::uint64_t messages) {
  if (traffic_) {
    traffic_->add(traffic_->received_bytes, bytes);
    traffic_->add(traffic_->received_messages, messages);
  } else {
    unattributed_read_ += bytes;  // the handshake's: no messages before the peer is known
  }
}

void Connection::send_ping() {
  last_ping_ = now_ns();
  if (first_ping_ == 0) first_ping_ = last_ping_;
  send_frame(Ping{last_ping_});
}

void Connection::on_pong(const Pong& pong) {
  // Only a token this connection sent is a send time: a peer could echo anything.
  if (first_ping_ == 0 || pong.token < first_ping_ || pong.token > last_ping_) return;
  rtt_ns_.store(static_cast<std::int64_t>(now_ns() - pong.token), std::memory_order_relaxed);
}

RxFlow& Connection::rx_flow(std::uint32_t id) {
  // Messages of one flow come in runs: remember the last one instead of a lookup per message.
  if (last_rx_flow_ != nullptr && last_rx_flow_->id() == id) return *last_rx_flow_;
  auto it = rx_flows_.find(id);
  if (it == rx_flows_.end()) {
    std::weak_ptr<Connection> weak = weak_from_this();
    auto flow = std::make_shared<RxFlow>(id, net_.next_pusher_key(), [weak, id](std::uint32_t delta) {
      if (auto conn = weak.lock()) conn->send_credit(id, delta);
    });
    net_.register_pusher(flow);
    it = rx_flows_.emplace(id, std::move(flow)).first;
  }
  last_rx_flow_ = it->second.get();
  return *last_rx_flow_;
}

void Connection::acknowledge(std::uint32_t flow_id) { rx_flow(flow_id).delivered(1); }

void Connection::on_message(const MessageFrame& frame) {
  auto skip = [&](const std::string& why) {
    net_.log(LogLevel::Warn, fmt::format("node {} ({}): frame {}: {}.{} skipped: {}", peer_.node_no, address_,
                                         reader_.frames_read(), frame.protocol, frame.name, why));
    acknowledge(frame.flow_id);
    if (frame.request) {
      answer_failed(frame.request_id, frame.trace_id,
                    fmt::format("node {} skipped {}.{}: {}", net_.node_no(), frame.protocol, frame.name, why));
    }
  };

  auto decoded = AnyMessage::decode_envelope(frame.protocol, frame.name, frame.payload, Addr{frame.sender},
                                             TraceId{frame.trace_id});
  if (!decoded) return skip(decoded.error().message());
  Envelope envelope = std::move(decoded).value();
  const auto& vtable = envelope.vtable();
  Addr to;
  if (frame.direct) {
    to = Addr{frame.recipient};
    if (to.node_no() != net_.node_no()) return skip(fmt::format("addressed to node {}, not this one", to.node_no()));
  } else {
    if (elfin::detail::group_by_no(net_.system(), frame.group_no) == nullptr) {
      return skip(fmt::format("this node has no group number {}", frame.group_no));
    }
    to = Addr::group(net_.node_no(), frame.group_no);
  }

  std::shared_ptr<elfin::detail::RequestStateBase> request;
  if (frame.request) {
    if (vtable.request_ops == nullptr) return skip("sent as a request but it is not one here");
    std::weak_ptr<Connection> weak = weak_from_this();
    const auto* ops = vtable.request_ops;
    const std::uint64_t request_id = frame.request_id;
    request = ops->make_remote_state(frame.request_all, [weak, ops, request_id](elfin::detail::RequestStateBase& s) {
      auto conn = weak.lock();
      if (!conn) return;  // the requester's connection is gone; so is the requester's wait
      ResponseFrame response;
      response.request_id = request_id;
      response.trace_id = s.response_trace_id().raw();
      auto answers = ops->take_answers(s);
      for (const auto& a : answers) {
        response.items.push_back(ResponseItem{static_cast<ResponseStatus>(a.status), a.payload});
      }
      conn->send_response(response);
    });
    elfin::detail::EnvelopeAccess::block(envelope)->kind = MessageKind::Request;
    elfin::detail::EnvelopeAccess::block(envelope)->request = request;
  }

  RxFlow& flow = rx_flow(frame.flow_id);
  BlockedDelivery delivery{
      elfin::detail::SendOp{net_.system(), to, std::move(envelope), elfin::detail::SendMode::Bounded},
      std::move(request)};
  bool delivered_now = false;
  const bool wake = flow.deliver_in_order(std::move(delivery), [&](BlockedDelivery& d) {
    if (!d.op.run_until_full()) return false;
    if (d.request) d.request->release_sender();
    delivered_now = true;
    return true;
  });
  if (delivered_now) flow.delivered(1);
  if (wake) net_.wake_pusher(flow.pusher_key());
}

void Connection::on_response(const ResponseFrame& frame) {
  Pending pending;
  {
    std::lock_guard lock(pending_mu_);
    auto it = pending_.find(frame.request_id);
    if (it == pending_.end()) {
      net_.log(LogLevel::Warn, fmt::format("node {} ({}): frame {}: a response to unknown request {}, skipped",
                                           peer_.node_no, address_, reader_.frames_read(), frame.request_id));
      return;
    }
    pending = std::move(it->second);
    pending_.erase(it);
  }
  std::vector<elfin::detail::AnswerView> answers;
  answers.reserve(frame.items.size());
  for (const auto& item : frame.items) {
    answers.push_back({static_cast<elfin::detail::AnswerStatus>(item.status), item.payload});
  }
  if (auto problem = pending.ops->apply_answers(*pending.state, answers, TraceId{frame.trace_id})) {
    net_.log(LogLevel::Warn,
             fmt::format("node {} ({}): request {}: {}", peer_.node_no, address_, frame.request_id, *problem));
  }
}

void Connection::on_credit(const Credit& credit) {
  std::shared_ptr<TxFlow> flow;
  {
    std::lock_guard lock(flows_mu_);
    auto it = tx_flows_.find(credit.flow_id);
    if (it != tx_flows_.end()) flow = it->second;
  }
  if (flow) flow->grant(credit.delta);
}

// --- timers and closing ----------------------------------------------------------------------

void Connection::start_timer() {
  const auto& config = net_.config();
  auto period = std::min(config.ping_interval, config.idle_timeout / 2);
  if (period.count() <= 0) period = std::chrono::milliseconds{1000};
  timer_.expires_after(period);
  timer_.async_wait([self = shared_from_this()](std::error_code ec) {
    if (!ec) self->on_timer();
  });
}

void Connection::on_timer() {
  if (closed()) return;
  const auto now = Clock::now();
  const auto& config = net_.config();
  if (phase_ != Phase::Open && now - opened_at_ > config.idle_timeout) {
    close(fmt::format("handshake not finished within {} ms", config.idle_timeout.count()));
    return;
  }
  if (now - last_received_ > config.idle_timeout) {
    close(fmt::format("nothing received for {} ms (idle_timeout)", config.idle_timeout.count()));
    return;
  }
  if (phase_ == Phase::Open) send_ping();
  start_timer();
}

void Connection::close(std::string reason, bool bye) {
  if (closed_.exchange(true, std::memory_order_acq_rel)) return;
  if (bye) {
    std::string frame;
    encode(Bye{reason}, frame);
    std::lock_guard lock(out_mu_);
    out_.append(frame);
  }
  asio::post(net_.io(), [self = shared_from_this(), reason = std::move(reason), bye] {
    if (bye) {
      // A best-effort goodbye that never blocks: one non-blocking write of what is buffered, only
      // if nobody is writing (an asynchronous or a direct write's bytes would interleave). Taking
      // the writer's role keeps anyone else from starting one.
      OutQueue rest;
      {
        std::lock_guard lock(self->out_mu_);
        if (self->writer_ == Writer::None) {
          self->writer_ = Writer::Io;
          swap(rest, self->out_);
        }
      }
      if (!rest.empty()) {
        std::error_code ignored;
        self->socket_.non_blocking(true, ignored);
        std::vector<asio::const_buffer> buffers;
        rest.for_each_buffer([&buffers](const char* data, std::size_t size) { buffers.emplace_back(data, size); });
        self->count_written(self->socket_.write_some(buffers, ignored));
      }
    }
    self->finish_close(reason);
  });
}

void Connection::finish_close(const std::string& reason) {
  {
    std::lock_guard lock(out_mu_);
    out_closed_ = true;
    out_.clear();
  }
  {
    // Waits for a direct write in progress (one non-blocking send); none starts after this.
    std::lock_guard fd_lock(fd_mu_);
    fd_closed_ = true;
  }
  std::error_code ignored;
  timer_.cancel();
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  open_.store(false, std::memory_order_release);

  std::unordered_map<std::uint64_t, Pending> pending;
  {
    std::lock_guard lock(pending_mu_);
    pending_closed_ = true;
    pending.swap(pending_);
  }
  for (auto& [id, p] : pending) {
    p.state->fail(RequestError{RequestError::Failed,
                               fmt::format("the connection to node {} closed before the answer came", peer_.node_no)});
  }
  {
    std::lock_guard lock(flows_mu_);
    for (auto& [id, flow] : tx_flows_) flow->close();
  }
  std::string text = reason;
  if (!pending.empty()) text += fmt::format("; {} request(s) waiting for an answer failed", pending.size());
  net_.closed(*this, text);
}

std::uint8_t Connection::peer_group(std::string_view name) const {
  auto it = peer_groups_.find(name);
  return it == peer_groups_.end() ? 0 : it->second;
}

std::vector<std::string> Connection::peer_group_names() const {
  std::vector<std::string> names;
  names.reserve(peer_groups_.size());
  for (const auto& [name, no] : peer_groups_) names.push_back(name);
  return names;
}

}  // namespace elfin::network::detail
