// Typed values of a JSON report, read without nlohmann's silent conversions:
// its get<int>() took 2.5 as 2 (and 1e300 as undefined behaviour), get<double>()
// took true as 1. A value of the wrong type or out of range throws Error.
#pragma once

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/core/error.h"

namespace nkbench {

namespace json_value_detail {

template <typename T>
struct IsVector : std::false_type {};
template <typename E>
struct IsVector<std::vector<E>> : std::true_type {};

[[noreturn]] inline void wrongType(std::string_view key, const char* expected, const nlohmann::json& value) {
  throw Error(fmt::format("'{}' must be {}, got {}", key, expected, value.is_number() ? value.dump() : value.type_name()));
}

}  // namespace json_value_detail

// `value` (the value of `key`, for messages) as a T: an integer type, bool,
// double, std::string, a std::vector of those, or a map from strings to one of those.
template <typename T>
T jsonValue(const nlohmann::json& value, std::string_view key) {
  using namespace json_value_detail;
  if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) wrongType(key, "true or false", value);
    return value.get<bool>();
  } else if constexpr (std::signed_integral<T>) {
    if (value.is_number_unsigned()) {
      if (value.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<T>::max())) return T(value.get<std::uint64_t>());
    } else if (value.is_number_integer()) {
      if (std::in_range<T>(value.get<std::int64_t>())) return T(value.get<std::int64_t>());
    } else {
      wrongType(key, "an integer", value);
    }
    throw Error(fmt::format("'{}' is {}, out of range", key, value.dump()));
  } else if constexpr (std::is_same_v<T, double>) {
    if (!value.is_number()) wrongType(key, "a number", value);
    return value.get<double>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) wrongType(key, "a string", value);
    return value.get<std::string>();
  } else if constexpr (IsVector<T>::value) {
    if (!value.is_array()) wrongType(key, "a list", value);
    T list;
    for (const nlohmann::json& item : value) list.push_back(jsonValue<typename T::value_type>(item, key));
    return list;
  } else {
    static_assert(std::is_same_v<T, std::map<std::string, typename T::mapped_type>>);
    if (!value.is_object()) wrongType(key, "an object", value);
    T map;
    for (const auto& [name, item] : value.items()) map.emplace(name, jsonValue<typename T::mapped_type>(item, key));
    return map;
  }
}

}  // namespace nkbench
