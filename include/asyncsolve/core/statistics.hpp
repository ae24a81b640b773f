#pragma once
/// Statistics over the repeats of a measurement, and the form a result
/// document gives them. Pure: no communication (the statistics over ranks
/// are par/stats.hpp's).
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace asyncsolve::core {

/// The median of `values`: the middle value, or the mean of the middle two
/// for an even count; 0 for none.
double median(std::vector<double> values);

/// The smallest of `values`; 0 for none.
double minimum(std::span<const double> values) noexcept;

/// The largest of `values`; 0 for none.
double maximum(std::span<const double> values) noexcept;

/// numerator[r] / denominator[r] for every repeat r both have (0 where the
/// denominator is not positive): a ratio taken repeat by repeat, so that
/// drift between repeats cancels.
std::vector<double> ratios(std::span<const double> numerator, std::span<const double> denominator);

/// One figure measured over repeats as the result documents hold it:
/// {"<repeats_key>": [every repeat], "min", "median", "max"}.
nlohmann::ordered_json series_json(std::span<const double> values,
                                   std::string_view repeats_key = "repeats");

}  // namespace asyncsolve::core
