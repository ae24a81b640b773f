#include "asyncsolve/core/statistics.hpp"

#include <algorithm>
#include <string>

namespace asyncsolve::core {

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double minimum(std::span<const double> values) noexcept {
  return values.empty() ? 0.0 : *std::min_element(values.begin(), values.end());
}

double maximum(std::span<const double> values) noexcept {
  return values.empty() ? 0.0 : *std::max_element(values.begin(), values.end());
}

std::vector<double> ratios(std::span<const double> numerator, std::span<const double> denominator) {
  const std::size_t n = std::min(numerator.size(), denominator.size());
  std::vector<double> out(n, 0.0);
  for (std::size_t r = 0; r < n; ++r) {
    if (denominator[r] > 0.0) out[r] = numerator[r] / denominator[r];
  }
  return out;
}

nlohmann::ordered_json series_json(std::span<const double> values, std::string_view repeats_key) {
  nlohmann::ordered_json out;
  out[std::string(repeats_key)] = std::vector<double>(values.begin(), values.end());
  out["min"] = minimum(values);
  out["median"] = median(std::vector<double>(values.begin(), values.end()));
  out["max"] = maximum(values);
  return out;
}

}  // namespace asyncsolve::core
