#include <gtest/gtest.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/triple.hpp"

using asyncsolve::core::InputError;
using asyncsolve::core::Int3;
using asyncsolve::core::parse_triple;

TEST(Triple, ParsesThreeIntegers) {
  EXPECT_EQ(parse_triple("50,40,30", "--local"), (Int3{50, 40, 30}));
  EXPECT_EQ(parse_triple("1,1,1", "--dims"), (Int3{1, 1, 1}));
}

TEST(Triple, RejectsMalformedZeroAndNegative) {
  for (const char* bad : {"", "1,2", "1,2,3,4", "a,b,c", "1,,3", "0,5,5", "5,-1,5", "5, 5,5",
                          "5,5,5x", "99999999999,1,1"}) {
    EXPECT_THROW(parse_triple(bad, "--local"), InputError) << "'" << bad << "'";
  }
}

TEST(Triple, MessageNamesOptionValueAndExpectation) {
  try {
    parse_triple("0,5,5", "--local");
    FAIL() << "no exception";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--local"), std::string::npos) << m;
    EXPECT_NE(m.find("0,5,5"), std::string::npos) << m;
    EXPECT_NE(m.find("expected"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(Triple, FormatsBack) {
  EXPECT_EQ(asyncsolve::core::format_triple({3, 2, 1}), "3,2,1");
  EXPECT_EQ(asyncsolve::core::product({3, 2, 1000000}), 6000000);
}
