// The vtables of elfin's own messages, compiled here once instead of in every file that includes
// messages.hpp or logging.hpp (see ELFIN_EXTERN_MESSAGE).
#include <elfin/logging.hpp>
#include <elfin/messages.hpp>

ELFIN_INSTANTIATE_MESSAGE(elfin::UpdateConfig);
ELFIN_INSTANTIATE_MESSAGE(elfin::ConfigUpdated);
ELFIN_INSTANTIATE_MESSAGE(elfin::ValidateConfig);
ELFIN_INSTANTIATE_MESSAGE(elfin::Terminate);
ELFIN_INSTANTIATE_MESSAGE(elfin::Ping);
ELFIN_INSTANTIATE_MESSAGE(elfin::SubscribeToActorStatuses);
ELFIN_INSTANTIATE_MESSAGE(elfin::ActorStatusReport);
ELFIN_INSTANTIATE_MESSAGE(elfin::LogRecord);
