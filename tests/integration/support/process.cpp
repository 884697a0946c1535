#include "process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "eventually.hpp"

extern char** environ;

namespace elfin::test {

namespace {

// Short enough that a wait ends soon after its condition holds, long enough not to spin a core
// that the nodes under test need.
constexpr auto kPollPause = std::chrono::milliseconds(10);

std::string read_from(const std::filesystem::path& path, std::size_t since) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(std::max<std::streamoff>(in.tellg(), 0));
  if (since >= size) return {};
  in.seekg(static_cast<std::streamoff>(since));
  std::string text(size - since, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::size_t size_of(const std::filesystem::path& path) {
  std::error_code error;
  auto size = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<std::size_t>(size);
}

// The test's environment with `additions` added or replacing variables of the same name.
std::vector<std::string> environment_with(const std::vector<std::pair<std::string, std::string>>& additions) {
  std::vector<std::string> env;
  for (char** var = environ; var != nullptr && *var != nullptr; ++var) {
    std::string_view entry(*var);
    const auto name = entry.substr(0, entry.find('='));
    const bool replaced =
        std::any_of(additions.begin(), additions.end(), [&](const auto& a) { return a.first == name; });
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& [name, value] : additions) {
    std::string entry = name;
    entry += '=';
    entry += value;
    env.push_back(std::move(entry));
  }
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

ExitStatus decode(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return ExitStatus::exited(info.si_status);
  return ExitStatus::killed_by(info.si_status);  // CLD_KILLED or CLD_DUMPED
}

// posix_spawn's attribute and file-action objects, destroyed on every path.
struct SpawnSetup {
  posix_spawnattr_t attr{};
  posix_spawn_file_actions_t actions{};
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

std::string to_string(const ExitStatus& status) {
  if (status.signal == 0) return "exit code " + std::to_string(status.code);
  const char* name = ::strsignal(status.signal);  // NOLINT(concurrency-mt-unsafe): the test's thread alone calls it
  return "killed by signal " + std::to_string(status.signal) + " (" + (name ? name : "?") + ")";
}

std::ostream& operator<<(std::ostream& out, const ExitStatus& status) { return out << to_string(status); }

Result<Process, std::string> Process::start(std::vector<std::string> argv, ProcessOptions options) {
  if (argv.empty()) return Err{std::string("Process::start: empty argv")};
  Process process;
  process.argv_ = argv;
  std::filesystem::path log_dir = options.log_dir;
  if (log_dir.empty()) {
    process.own_logs_ = std::make_unique<TempDir>();
    log_dir = process.own_logs_->path();
  } else {
    std::error_code error;
    std::filesystem::create_directories(log_dir, error);
    if (error) return Err{"cannot create " + log_dir.string() + ": " + error.message()};
  }
  process.stdout_path_ = log_dir / (options.name + ".stdout.log");
  process.stderr_path_ = log_dir / (options.name + ".stderr.log");

  SpawnSetup setup;
  // Own process group (pgid = pid), so the destructor can kill whatever the child started.
  short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  posix_spawnattr_setflags(&setup.attr, flags);
  posix_spawnattr_setpgroup(&setup.attr, 0);
  // The test runner may block or handle signals (Catch2 does); the child starts with none
  // blocked and every catchable one at its default.
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&setup.attr, &none);
  sigset_t all;
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  posix_spawnattr_setsigdefault(&setup.attr, &all);

  // No O_CLOEXEC: glibc may open the file straight onto the target descriptor, which exec would close.
  const int open_flags = O_WRONLY | O_CREAT | O_TRUNC;
  posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&setup.actions, STDOUT_FILENO, process.stdout_path_.c_str(), open_flags, 0644);
  posix_spawn_file_actions_addopen(&setup.actions, STDERR_FILENO, process.stderr_path_.c_str(), open_flags, 0644);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&setup.actions, options.cwd.c_str());

  auto args = c_strings(argv);
  auto env_strings = environment_with(options.env);
  auto env = c_strings(env_strings);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, argv[0].c_str(), &setup.actions, &setup.attr, args.data(), env.data());
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the test's thread; a rare message garbled at worst
  if (error != 0) return Err{"cannot start " + argv[0] + ": " + std::strerror(error)};
  process.pid_ = pid;
  return process;
}

Process::Process(Process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      argv_(std::move(other.argv_)),
      own_logs_(std::move(other.own_logs_)),
      stdout_path_(std::move(other.stdout_path_)),
      stderr_path_(std::move(other.stderr_path_)),
      status_(other.status_) {}

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = std::exchange(other.pid_, -1);
    argv_ = std::move(other.argv_);
    own_logs_ = std::move(other.own_logs_);
    stdout_path_ = std::move(other.stdout_path_);
    stderr_path_ = std::move(other.stderr_path_);
    status_ = other.status_;
  }
  return *this;
}

Process::~Process() { kill_and_reap(); }

void Process::kill_and_reap() noexcept {
  if (pid_ <= 0 || status_) return;
  // Not reaped yet, so the group id is still ours (a zombie leader keeps it reserved).
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = WIFEXITED(status) ? ExitStatus::exited(WEXITSTATUS(status)) : ExitStatus::killed_by(WTERMSIG(status));
}

bool Process::reap_if_ended() {
  if (status_) return true;
  if (pid_ <= 0) return false;
  siginfo_t info{};
  // WNOWAIT: look without reaping, so the group can still be cleaned up under its id.
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) {
    return false;
  }
  ::kill(-pid_, SIGKILL);  // leftovers of the group, if any (elfin starts no children)
  int ignored = 0;
  while (::waitpid(pid_, &ignored, 0) < 0 && errno == EINTR) {
  }
  status_ = decode(info);
  return true;
}

std::optional<ExitStatus> Process::wait_exit(std::chrono::milliseconds timeout) {
  if (!elfin::test::eventually([this] { return reap_if_ended(); }, timeout, kPollPause)) return std::nullopt;
  return status_;
}

bool Process::signal(int signo) {
  if (pid_ <= 0 || status_) return false;
  return ::kill(pid_, signo) == 0;
}

bool Process::kill() {
  if (pid_ <= 0 || status_) return false;
  return ::kill(-pid_, SIGKILL) == 0;
}

OutputMark Process::mark() const { return {size_of(stdout_path_), size_of(stderr_path_)}; }

std::string Process::stdout_text(std::size_t since) const { return read_from(stdout_path_, since); }
std::string Process::stderr_text(std::size_t since) const { return read_from(stderr_path_, since); }
std::string Process::output(OutputMark since) const { return stdout_text(since.out) + stderr_text(since.err); }

bool Process::wait_for_output(const std::function<bool(const std::string&)>& found, std::chrono::milliseconds timeout,
                              OutputMark since) {
  bool seen = false;
  elfin::test::eventually(
      [&] {
        // Whether it had ended is read before the output, so a last line printed just before the
        // exit is still seen; an ended process prints nothing more, so the wait ends there.
        const bool ended = reap_if_ended();
        // Each stream on its own: a line is never split between them.
        seen = found(stdout_text(since.out)) || found(stderr_text(since.err));
        return seen || ended;
      },
      timeout, kPollPause);
  return seen;
}

bool Process::wait_for_output(const std::regex& pattern, std::chrono::milliseconds timeout, OutputMark since) {
  return wait_for_output([&](const std::string& text) { return std::regex_search(text, pattern); }, timeout, since);
}

bool Process::wait_for_output(std::string_view text, std::chrono::milliseconds timeout, OutputMark since) {
  return wait_for_output([&](const std::string& output) { return output.find(text) != std::string::npos; }, timeout,
                         since);
}

std::uint16_t free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the test's thread; a rare message garbled at worst
  if (fd < 0) throw std::runtime_error(std::string("free_tcp_port: socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;  // the kernel picks a free one
  socklen_t length = sizeof(address);
  // The sockaddr casts are how the BSD socket API is typed.
  auto* generic = reinterpret_cast<sockaddr*>(&address);  // NOLINT
  const bool ok = ::bind(fd, generic, sizeof(address)) == 0 && ::getsockname(fd, generic, &length) == 0;
  const int saved = errno;
  ::close(fd);
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the test's thread; a rare message garbled at worst
  if (!ok) throw std::runtime_error(std::string("free_tcp_port: ") + std::strerror(saved));
  return ntohs(address.sin_port);
}

bool address_in_use(std::string_view output) {
  for (std::string_view needle : {"ddress already in use", "ddress in use", "EADDRINUSE"}) {
    if (output.find(needle) != std::string_view::npos) return true;
  }
  return false;
}

std::string elfin_binary() { return ELFIN_BINARY; }
std::string demo_binary() { return ELFIN_DEMO_BINARY; }

std::filesystem::path source_dir() { return ELFIN_SOURCE_DIR; }

std::vector<std::string> write_files(const TempDir& dir,
                                     const std::vector<std::pair<std::string_view, std::string_view>>& files) {
  std::vector<std::string> paths;
  paths.reserve(files.size());
  for (const auto& [name, text] : files) paths.push_back(dir.write(name, text));
  return paths;
}

}  // namespace elfin::test
