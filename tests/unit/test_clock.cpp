// The process clock and the cost meter (core/timer.hpp, core/cost.hpp): what
// the simulation build replaces, checked with hand-made replacements.
#include <gtest/gtest.h>

#include "asyncsolve/core/cost.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/ops/stencil7.hpp"
#include "asyncsolve/ops/vector.hpp"
#include "asyncsolve/par/simulation.hpp"

using namespace asyncsolve;

namespace {

double fixed_clock() noexcept { return 42.0; }

double charged_bytes = 0.0;
void count_bytes(double bytes) noexcept { charged_bytes += bytes; }

}  // namespace

TEST(Clock, SetClockReplacesNowAndNullRestoresTheSteadyClock) {
  ASSERT_FALSE(par::is_simulated());  // the unit tests are the real build
  core::set_clock(&fixed_clock);
  EXPECT_EQ(core::now_s(), 42.0);
  {
    core::PhaseTimers timers({"a"});
    { auto scope = timers.time(0); }
    EXPECT_EQ(timers.seconds(0), 0.0);  // the phase timers read the same clock
  }
  core::set_clock(nullptr);
  const double t0 = core::now_s();
  EXPECT_NE(t0, 42.0);
  EXPECT_GE(core::now_s(), t0);
}

TEST(CostMeter, KernelsReportTheBytesTheyStream) {
  grid::Field u(grid::Int3{4, 3, 2}, 1);
  grid::Field v(grid::Int3{4, 3, 2}, 1);
  core::charge_bytes(1.0);  // no meter: nothing happens
  core::set_cost_meter(&count_bytes);
  charged_bytes = 0.0;
  ops::jacobi_sweep(u, v);  // 24 points, 16 B each
  EXPECT_EQ(charged_bytes, 24.0 * 16.0);
  charged_bytes = 0.0;
  ops::axpy(2.0, u, v);  // x read, y read and written: 3 vectors of 8 B
  EXPECT_EQ(charged_bytes, 24.0 * 24.0);
  charged_bytes = 0.0;
  ops::jacobi_sweep_ref(u, v);  // the reference twins are not charged
  EXPECT_EQ(charged_bytes, 0.0);
  core::set_cost_meter(nullptr);
  ops::jacobi_sweep(u, v);
  EXPECT_EQ(charged_bytes, 0.0);
}
