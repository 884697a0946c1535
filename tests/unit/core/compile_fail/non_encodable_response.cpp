// Must not compile: a request whose response type cannot travel (here a raw pointer) is refused by
// one readable static_assert where the request is used (tests/unit/CMakeLists.txt checks the text).
#include <elfin/elfin.hpp>

struct Handle {
  int* resource = nullptr;
};

struct Open {
  ELFIN_REQUEST(compile_fail, Open, Handle);
};

int main() { return elfin::vtable_of<Open>().is_request ? 0 : 1; }
