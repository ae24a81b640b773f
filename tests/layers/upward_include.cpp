// Compiled against the `core` layer's include tree by the layers.upward
// test, which expects the build to fail: core may not use solvers.
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/solvers/jacobi.hpp"
