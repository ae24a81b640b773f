// Compiled against the `core` layer's include tree by the layers.own test,
// which expects it to compile: the control for layers.upward.
#include "asyncsolve/core/error.hpp"

int main() { return static_cast<int>(asyncsolve::core::ExitCode::success); }
