// --pc-option into the typed settings: every default, every value's way
// into its field, and the ranges.
#include <gtest/gtest.h>

#include <string>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/precond/preconditioner.hpp"

namespace {

using asyncsolve::core::InputError;
using asyncsolve::precond::BoomerAmgSettings;
using asyncsolve::precond::parse_pc_options;
using asyncsolve::precond::pc_option_summary;
using asyncsolve::precond::PcKind;
using asyncsolve::precond::PcSettings;

TEST(PcOptions, TheSummaryShowsTheTypedDefaults) {
  // The defaults are the typed fields' initialisers; the summary (--help)
  // spells them.
  const std::string amg = pc_option_summary(PcKind::boomeramg);
  for (const char* d :
       {"coarsen=hmis|pmis|falgout|cljp|rs (coarsening (HYPRE_BoomerAMGSetCoarsenType), default "
        "hmis)",
        "default ext+i", "default l1-sym-gs", "cycle=v|w (cycle type, default v)",
        "strong_threshold=0 to 1 (strength threshold, default 0.25)", "default 25", "default 4"}) {
    EXPECT_NE(amg.find(d), std::string::npos) << d << " in " << amg;
  }
  const std::string cheb = pc_option_summary(PcKind::chebyshev);
  EXPECT_NE(cheb.find("lanczos_steps=2 to 200"), std::string::npos) << cheb;
  EXPECT_NE(cheb.find("default 10"), std::string::npos) << cheb;
  EXPECT_NE(cheb.find("default 1.1"), std::string::npos) << cheb;
  EXPECT_EQ(pc_option_summary(PcKind::jacobi), "none");
}

TEST(PcOptions, ValuesReachTheirTypedFields) {
  PcSettings s;
  s.kind = PcKind::boomeramg;
  parse_pc_options(
      "coarsen=pmis,interp=classical,relax=l1-jacobi\ncycle=w,cycles=3,sweeps=2,"
      "strong_threshold=0.5,agg_levels=1,max_levels=10,pmax=0",
      s);
  const BoomerAmgSettings& a = s.boomeramg;
  EXPECT_EQ(a.coarsen, BoomerAmgSettings::Coarsen::pmis);
  EXPECT_EQ(a.interp, BoomerAmgSettings::Interp::classical);
  EXPECT_EQ(a.relax, BoomerAmgSettings::Relax::l1_jacobi);
  EXPECT_EQ(a.cycle, BoomerAmgSettings::Cycle::w);
  EXPECT_EQ(a.cycles, 3);
  EXPECT_EQ(a.sweeps, 2);
  EXPECT_EQ(a.strong_threshold, 0.5);
  EXPECT_EQ(a.agg_levels, 1);
  EXPECT_EQ(a.max_levels, 10);
  EXPECT_EQ(a.pmax, 0);
  ASSERT_EQ(s.options.size(), 10u);
  EXPECT_EQ(s.options[0].second, "pmis");
  EXPECT_EQ(asyncsolve::precond::pc_options_text(s).substr(0, 25), "coarsen=pmis,interp=class");

  // A second parse starts from the defaults again; a name given twice is refused.
  parse_pc_options("cycles=4", s);
  EXPECT_EQ(s.boomeramg.cycles, 4);
  EXPECT_EQ(s.boomeramg.coarsen, BoomerAmgSettings::Coarsen::hmis);
  EXPECT_THROW(parse_pc_options("cycles=2,cycles=4", s), asyncsolve::core::InputError);

  PcSettings c;
  c.kind = PcKind::chebyshev;
  parse_pc_options("lanczos_steps=20,lambda_max_factor=1.25", c);
  EXPECT_EQ(c.chebyshev.lanczos_steps, 20);
  EXPECT_EQ(c.chebyshev.lambda_max_factor, 1.25);
}

TEST(PcOptions, OutOfRangeAndUnknownAreRefused) {
  PcSettings s;
  s.kind = PcKind::boomeramg;
  for (const char* bad : {"cycles=0", "cycles=11", "cycles=1.5", "strong_threshold=2",
                          "coarsen=fast", "max_levels=1", "pmax=-1", "colour=red", "cycles"}) {
    EXPECT_THROW(parse_pc_options(bad, s), InputError) << bad;
  }
  PcSettings c;
  c.kind = PcKind::chebyshev;
  EXPECT_THROW(parse_pc_options("lanczos_steps=1", c), InputError);
  EXPECT_THROW(parse_pc_options("lambda_max_factor=inf", c), InputError);
  PcSettings j;
  j.kind = PcKind::jacobi;
  EXPECT_THROW(parse_pc_options("cycles=1", j), InputError);
}

// A nonsymmetric method's defaults: boomeramg's smoother becomes forward
// l1 Gauss-Seidel unless relax was given; ilu0 takes no option.
TEST(PcOptions, NonsymmetricDefaultsKeepWhatWasGiven) {
  PcSettings s;
  s.kind = PcKind::boomeramg;
  parse_pc_options("cycles=2", s);
  asyncsolve::precond::use_nonsymmetric_defaults(s);
  EXPECT_EQ(s.boomeramg.relax, BoomerAmgSettings::Relax::l1_gs);
  EXPECT_EQ(s.boomeramg.cycles, 2);
  parse_pc_options("relax=sym-gs", s);
  asyncsolve::precond::use_nonsymmetric_defaults(s);
  EXPECT_EQ(s.boomeramg.relax, BoomerAmgSettings::Relax::sym_gs);
  parse_pc_options("relax=gs", s);
  EXPECT_EQ(s.boomeramg.relax, BoomerAmgSettings::Relax::gs);

  PcSettings ilu;
  asyncsolve::precond::parse_pc("ilu0", ilu);
  EXPECT_EQ(ilu.kind, PcKind::ilu0);
  EXPECT_EQ(asyncsolve::precond::pc_kind_name(ilu.kind), "ilu0");
  EXPECT_THROW(parse_pc_options("fill=1", ilu), InputError);
}

}  // namespace
