#include <elfin/internal/thread_name.hpp>

#include <pthread.h>

namespace elfin::detail {

void name_this_thread(const std::string& name) noexcept {
#if defined(__linux__)
  // The kernel refuses names longer than 15 bytes (ERANGE) instead of cutting them.
  const std::string cut = name.substr(0, 15);
  (void)pthread_setname_np(pthread_self(), cut.c_str());
#else
  (void)name;
#endif
}

}  // namespace elfin::detail
