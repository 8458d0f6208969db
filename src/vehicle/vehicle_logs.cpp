// VehicleData's onboard logs: GET /v1/vehicles/SYS/COMP/logs (the list), .../logs/ID (the log,
// streamed; a Range of it), DELETE .../logs (all erased) through the engine's LogExchange.
#include <fmt/format.h>

#include <charconv>

#include "services/log_exchange.hpp"
#include "vehicle/vehicle_answer.hpp"

namespace mavswitch::vehicle {
namespace {

using services::LogExchange;
using End = Transactions::End;

VehicleData::Answer log_refused(End end, uint8_t system, uint8_t component) {
  if (end == End::kBusy)
    return error_answer(409, fmt::format("a log transfer with {}/{} is under way", system, component));
  if (end == End::kFull)
    return error_answer(503, "too many transactions with the vehicles under way; try again shortly");
  if (end == End::kGone) return error_answer(504, fmt::format("the route to {}/{} went", system, component));
  return error_answer(504, fmt::format("no log answer from {}/{} ({} tries, {} ms apart)", system, component,
                                       LogExchange::kTries, LogExchange::kRetryMs));
}

// "bytes=FIRST-LAST", "bytes=FIRST-" or "bytes=-SUFFIX" of `size` bytes: [first, end). Nothing
// for a header that asks for several ranges or is not one (the whole is answered); `bad` for one
// that no byte of the log satisfies (416).
std::optional<std::pair<uint64_t, uint64_t>> byte_range(std::string_view header, uint64_t size, bool* bad) {
  *bad = false;
  if (!header.starts_with("bytes=") || header.find(',') != std::string_view::npos) return std::nullopt;
  header.remove_prefix(6);
  const size_t dash = header.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  const auto number = [](std::string_view text, uint64_t* v) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *v);
    return ec == std::errc() && end == text.data() + text.size() && !text.empty();
  };
  uint64_t first = 0, last = 0;
  const std::string_view a = header.substr(0, dash), b = header.substr(dash + 1);
  if (a.empty()) {  // the last b bytes
    if (!number(b, &last) || last == 0) return *bad = true, std::nullopt;
    return std::pair{size - std::min(last, size), size};
  }
  if (!number(a, &first) || (!b.empty() && (!number(b, &last) || last < first))) return std::nullopt;
  if (first >= size) return *bad = true, std::nullopt;
  return std::pair{first, b.empty() ? size : std::min(last + 1, size)};
}

}  // namespace

struct VehicleData::LogJob {
  uint8_t system = 0, component = 0;
  std::shared_ptr<OnceAnswer> answer;
};

void VehicleData::log(uint8_t system, uint8_t component, std::string method, std::optional<uint16_t> id,
                      std::string range, std::function<void(Answer)> answer) {
  auto job = std::make_shared<LogJob>();
  job->system = system, job->component = component;
  job->answer = std::make_shared<OnceAnswer>(std::move(answer));
  router_.event_loop().post(guarded(job->answer, [this, job, method = std::move(method), id, range = std::move(range)] {
    auto exchange = id ? LogExchange::list(job->system, job->component, *id, *id)
                       : LogExchange::list(job->system, job->component, 0, 0xFFFF, method == "DELETE");
    transactions_.run<LogExchange>(
        this, job->system, job->component, "log", std::move(exchange),
        guarded(job->answer, [this, job, id, range, erased = method == "DELETE"](End end, const LogExchange& e) {
          if (end != End::kDone) return (*job->answer)(log_refused(end, job->system, job->component));
          if (!id) {
            nlohmann::json logs = nlohmann::json::array();
            for (const auto& [n, entry] : e.entries())
              logs.push_back({{"id", n}, {"size", entry.size}, {"time_utc", entry.time_utc}});
            nlohmann::json said = {{"logs", std::move(logs)}};
            if (erased) said["erased"] = true;
            return (*job->answer)({200, json_text(said, 2)});
          }
          const auto it = e.entries().find(*id);
          if (it == e.entries().end())
            return (*job->answer)(
                error_answer(404, fmt::format("{}/{} has no log {}", job->system, job->component, *id)));
          read_log(job, *id, it->second.size, range);
        }));
  }));
}

void VehicleData::read_log(std::shared_ptr<LogJob> job, uint16_t id, uint64_t size, const std::string& range) {
  bool bad = false;
  const auto part = range.empty() ? std::nullopt : byte_range(range, size, &bad);
  if (bad) {
    Answer a = error_answer(416, fmt::format("log {} has {} bytes", id, size));
    a.content_range = fmt::format("bytes */{}", size);
    return (*job->answer)(std::move(a));
  }
  const uint64_t first = part ? part->first : 0, end = part ? part->second : size;
  auto stream = std::make_shared<ByteStream>(kFileStreamBytes);
  Answer a{part ? 206 : 200};
  a.content_type = "application/octet-stream";
  a.stream = stream;
  a.length = static_cast<int64_t>(end - first);
  if (part) a.content_range = fmt::format("bytes {}-{}/{}", first, end - 1, size);
  (*job->answer)(std::move(a));
  transactions_.run<LogExchange>(this, job->system, job->component, "log",
                                 LogExchange::read(job->system, job->component, id, first, end, stream),
                                 [stream](End, const LogExchange& e) { stream->finish(e.complete()); });
}

}  // namespace mavswitch::vehicle
