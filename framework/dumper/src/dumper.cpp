#include <elfin/dumper/dumper.hpp>

#include <memory>
#include <stdexcept>

#include <elfin/actor_group.hpp>
#include <elfin/context.hpp>
#include <elfin/dumper/dump_file_writer.hpp>
#include <elfin/dumping.hpp>
#include <elfin/handle.hpp>
#include <elfin/internal/dump_storage.hpp>
#include <elfin/interval.hpp>
#include <elfin/messages.hpp>
#include <elfin/signal.hpp>
#include <elfin/system_view.hpp>
#include <elfin/telemetry.hpp>

namespace elfin::dumper {

namespace {

struct WriteTick {
  ELFIN_MESSAGE(dumper, WriteTick);
  ELFIN_NO_DUMPING;  // the dumper's own clock is not worth a line per tick
};

// Publishes what the writer did since the last call as counters of the dumper's group.
class WrittenCounters {
 public:
  void publish(const DumpFileWriter::Stats& stats) {
    metrics::increment_counter("elfin_written_dumps_total", stats.written - written_);
    metrics::increment_counter("elfin_lost_written_dumps_total", stats.lost - lost_);
    written_ = stats.written;
    lost_ = stats.lost;
  }

 private:
  std::uint64_t written_ = 0;
  std::uint64_t lost_ = 0;
};

Task<> exec(Context<Config> ctx) {
  dumping::DumpStorage* storage = dumping::storage_of(ctx);
  std::unique_ptr<DumpFileWriter> writer;
  std::string path;
  WrittenCounters counters;
  auto tick = ctx.attach(Interval(WriteTick{}));
  ctx.attach(Signal(SignalKind::Hangup, ReopenDumpFile{}));

  auto write_out = [&] {
    if (writer != nullptr) writer->drain();
  };

  auto configure = [&] {
    const Config& config = ctx.config();
    if (config.path.empty()) {
      throw std::invalid_argument{"[system.dumpers] path is not set: where should dumps be written?"};
    }
    if (std::string wanted = SystemView::of(ctx).resolve_path(config.path); wanted != path) {
      write_out();
      writer.reset();  // flushes what it holds into the old file
      writer = std::make_unique<DumpFileWriter>(wanted, storage != nullptr ? storage->node_no() : 0,
                                                config.max_body_size.bytes, storage);
      path = std::move(wanted);
      tick.start(config.write_interval);
    } else {
      writer->set_max_body_size(config.max_body_size.bytes);
      tick.set_period(config.write_interval);
    }
  };
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope, [&](const ConfigUpdated&) { configure(); },
        [&](const WriteTick&) {
          write_out();
          counters.publish(writer->stats());
        },
        [&](const ReopenDumpFile&) {
          write_out();  // what was recorded before the rotation goes to the old file
          writer->reopen();
        },
        [&](const FlushDumps&, ResponseToken<FlushDumps> token) {
          write_out();
          writer->flush();
          counters.publish(writer->stats());
          ctx.respond(std::move(token), writer->stats().written);
        });
  }
  // Terminating: user groups are gone, so this drain holds their last dumps.
  write_out();
}

}  // namespace

Blueprint blueprint() {
  metrics::describe("elfin_written_dumps_total", "Dumps the dumper wrote to its file");
  metrics::describe("elfin_lost_written_dumps_total",
                    "Dumps of batches the dump file did not take (disk full, no such directory)");
  return ActorGroup().config<Config>().exec(exec);
}

}  // namespace elfin::dumper

ELFIN_INSTANTIATE_MESSAGE(elfin::dumper::ReopenDumpFile);
ELFIN_INSTANTIATE_MESSAGE(elfin::dumper::FlushDumps);
