#include "vehicle/parameter_file.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <sstream>

namespace mavswitch::vehicle {
namespace {

bool integer_type(uint8_t type) { return type >= 1 && type <= 8; }  // MAV_PARAM_TYPE_UINT8 .. INT64

std::string value_text(const VehicleParameters::Parameter& p) {
  if (integer_type(p.type)) return fmt::format("{}", static_cast<long long>(std::llround(p.value)));
  return fmt::format("{}", static_cast<float>(p.value));  // a float's shortest form: 0.3, not 0.30000001
}

bool read_double(std::string_view s, double* out) {
  const char* end = s.data() + s.size();
  return !s.empty() && std::from_chars(s.data(), end, *out).ptr == end && std::isfinite(*out);
}

bool good_name(std::string_view name) {
  if (name.empty() || name.size() > 16) return false;
  for (const char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace

std::string parameter_file(const std::vector<VehicleParameters::Parameter>& parameters, ParameterFormat format,
                           uint8_t system, uint8_t component) {
  std::string out;
  if (format == ParameterFormat::kQGroundControl)
    out = fmt::format(
        "# Onboard parameters for Vehicle {}\n#\n# Saved by mavswitch\n#\n"
        "# Vehicle-Id Component-Id Name Value Type\n",
        system);
  for (const auto& p : parameters) {
    if (!p.known) continue;
    if (format == ParameterFormat::kMissionPlanner)
      fmt::format_to(std::back_inserter(out), "{},{}\n", p.name, value_text(p));
    else
      fmt::format_to(std::back_inserter(out), "{}\t{}\t{}\t{}\t{}\n", system, component, p.name, value_text(p), p.type);
  }
  return out;
}

std::optional<std::vector<ParameterLine>> parse_parameter_file(std::string_view text, std::string* error) {
  std::vector<ParameterLine> lines;
  std::istringstream in{std::string(text)};
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::vector<std::string> fields;
    std::string field;
    for (const char c : line.substr(first)) {
      if (c == ',' || c == ' ' || c == '\t') {
        if (!field.empty()) fields.push_back(std::move(field)), field.clear();
      } else {
        field += c;
      }
    }
    if (!field.empty()) fields.push_back(std::move(field));
    ParameterLine p;
    double type = 0;
    if (fields.size() == 2 && good_name(fields[0]) && read_double(fields[1], &p.value)) {  // Mission Planner
      p.name = fields[0];
    } else if (fields.size() == 5 && good_name(fields[2]) && read_double(fields[3], &p.value) &&
               read_double(fields[4], &type) && type >= 1 && type <= 10) {  // QGroundControl
      p.name = fields[2];
      p.type = static_cast<uint8_t>(type);
    } else {
      *error =
          fmt::format("line {}: NAME,VALUE (Mission Planner) or SYS COMP NAME VALUE TYPE (QGroundControl)", number);
      return std::nullopt;
    }
    lines.push_back(std::move(p));
    if (lines.size() > VehicleParameters::kMaxParameters) {
      *error = fmt::format("more than {} parameters", VehicleParameters::kMaxParameters);
      return std::nullopt;
    }
  }
  return lines;
}

}  // namespace mavswitch::vehicle
