// The vtables of the shared test messages (see ELFIN_EXTERN_MESSAGE in test_protocol.hpp).
#include "test_protocol.hpp"

ELFIN_INSTANTIATE_MESSAGE(elfin::test::Increment);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::GetValue);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::Numbered);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::Boom);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::Echo);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::Keyed);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::Seen);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::Start);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::Gate);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::Question);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::Ask);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::Answers);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::Probe);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::Produce);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::WhoAmI);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::Tick);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::SenderDone);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::GetFifoReport);
ELFIN_INSTANTIATE_MESSAGE(elfin::test::other::Note);
