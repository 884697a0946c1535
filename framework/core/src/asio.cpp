// Asio is compiled once, here (ASIO_SEPARATE_COMPILATION), instead of in every translation unit
// that includes it.
#include <asio/impl/src.hpp>
