#include <elfin/detail/source.hpp>

#include <utility>

namespace elfin::detail {

bool SourceSet::poll(ActorCell& cell, Envelope& out) {
  if (polling_) return false;
  polling_ = true;
  for (auto& source : added_) sources_.push_back(std::move(source));
  added_.clear();
  bool found = false;
  // At most one pass over the sources, starting after the one that gave the last item.
  for (std::size_t visited = 0, n = sources_.size(); visited < n && !found && !sources_.empty(); ++visited) {
    if (next_ >= sources_.size()) next_ = 0;
    SourceBase& source = *sources_[next_];
    const SourceBase::Poll result = source.poll(cell, out);
    if (result == SourceBase::Poll::Item) found = true;
    if (result == SourceBase::Poll::Done || source.finished()) {
      source.detach();
      sources_.erase(sources_.begin() + static_cast<std::ptrdiff_t>(next_));  // next_ now names the following one
    } else {
      ++next_;
    }
  }
  polling_ = false;
  return found;
}

void SourceSet::clear() {
  // Moved out first: detaching a stream destroys its coroutine, whose frame may hold handles to
  // other sources of this set.
  auto sources = std::move(sources_);
  auto added = std::move(added_);
  sources_.clear();
  added_.clear();
  for (auto& source : sources) source->detach();
  for (auto& source : added) source->detach();
}

}  // namespace elfin::detail
