// VehicleData's files: GET, PUT and DELETE /v1/vehicles/SYS/COMP/files/PATH through the
// transaction engine's FtpExchange. A GET lists PATH as a directory first; what is not one is
// read as a file, streamed as it comes.
#include <fmt/format.h>

#include <random>

#include "services/ftp_exchange.hpp"
#include "vehicle/vehicle_answer.hpp"

namespace mavswitch::vehicle {
namespace {

using services::FtpExchange;
using End = Transactions::End;
namespace ftp = services::ftp;

// Why it did not work, as an answer: the engine's end, or the component's NAK.
VehicleData::Answer refused(End end, const FtpExchange& e, uint8_t system, uint8_t component, const std::string& path) {
  if (end == End::kBusy)
    return error_answer(409, fmt::format("a file operation with {}/{} is under way", system, component));
  if (end == End::kFull)
    return error_answer(503, "too many transactions with the vehicles under way; try again shortly");
  if (end == End::kGone) return error_answer(504, fmt::format("the route to {}/{} went", system, component));
  if (end == End::kNoAnswer)
    return error_answer(504, fmt::format("no MAVFTP answer from {}/{} ({} tries, {} ms apart)", system, component,
                                         FtpExchange::kTries, FtpExchange::kRetryMs));
  const uint8_t error = e.error().value_or(ftp::kFail);
  const int status = error == ftp::kFileNotFound          ? 404
                     : error == ftp::kFileExists          ? 409
                     : error == ftp::kFileProtected       ? 403
                     : error == ftp::kNoSessionsAvailable ? 503
                     : error == ftp::kUnknownCommand      ? 501
                                                          : 502;
  const std::string errno_text = error == ftp::kFailErrno ? fmt::format(", errno {}", e.error_errno()) : "";
  return error_answer(
      status, fmt::format("{}/{} refused {}: {}{}", system, component, path, ftp::error_name(error), errno_text));
}

}  // namespace

struct VehicleData::FileJob {
  uint8_t system = 0, component = 0;
  std::string path;
  std::shared_ptr<OnceAnswer> answer;
};

// The first number with a component is random: the component may keep a reply to a router that
// ran before this one, whose numbers began where these would.
uint16_t& VehicleData::ftp_seq(const FileJob& job) {
  const auto key = static_cast<uint16_t>(job.system << 8 | job.component);
  const auto [it, fresh] = ftp_seqs_.try_emplace(key, 0);
  if (fresh) it->second = static_cast<uint16_t>(std::random_device{}());
  return it->second;
}

void VehicleData::file(uint8_t system, uint8_t component, std::string method, std::string path, bool crc,
                       std::string body, std::function<void(Answer)> answer, std::shared_ptr<ByteStream> streamed,
                       uint64_t length) {
  auto job = std::make_shared<FileJob>();
  job->system = system, job->component = component, job->path = std::move(path);
  job->answer = std::make_shared<OnceAnswer>(std::move(answer));
  if (!streamed) length = body.size();
  router_.event_loop().post(guarded(job->answer, [this, job, method = std::move(method), crc, body = std::move(body),
                                                  streamed = std::move(streamed), length]() mutable {
    const FtpExchange::Mode mode = method == "PUT"      ? FtpExchange::Mode::kWrite
                                   : method == "DELETE" ? FtpExchange::Mode::kRemove
                                   : crc                ? FtpExchange::Mode::kCrc
                                                        : FtpExchange::Mode::kList;
    auto exchange = std::make_unique<FtpExchange>(mode, job->system, job->component, job->path, ftp_seq(*job));
    if (mode == FtpExchange::Mode::kWrite) {
      if (streamed)
        exchange->write_from(std::move(streamed), length);
      else
        exchange->write_from(std::move(body));
    }
    transactions_.run<FtpExchange>(
        this, job->system, job->component, "ftp", std::move(exchange),
        guarded(job->answer, [this, job, size = length](End end, const FtpExchange& e) {
          ftp_seq(*job) = e.next_seq();
          const bool worked = end == End::kDone && e.complete() && !e.error();
          if (e.mode() == FtpExchange::Mode::kList && !worked && end == End::kDone)
            return read_file(job);  // not a directory
          if (!worked) return (*job->answer)(refused(end, e, job->system, job->component, job->path));
          nlohmann::json said = {{"path", job->path}};
          switch (e.mode()) {
            case FtpExchange::Mode::kList: {
              nlohmann::json entries = nlohmann::json::array();
              for (const FtpExchange::Entry& entry : e.entries()) {
                nlohmann::json one = {{"name", entry.name}, {"type", entry.directory ? "directory" : "file"}};
                if (!entry.directory) one["size"] = entry.size;
                entries.push_back(std::move(one));
              }
              said["entries"] = std::move(entries);
              break;
            }
            case FtpExchange::Mode::kCrc: said["crc32"] = e.crc32(); break;
            case FtpExchange::Mode::kWrite: said["size"] = size; break;
            case FtpExchange::Mode::kRemove: said["removed"] = true; break;
            case FtpExchange::Mode::kRead: break;
          }
          (*job->answer)({200, json_text(said, 2)});
        }));
  }));
}

// The file streamed: answered once the component opened it (its size known), then fed as the
// bytes come; a transfer that fails after that ends the stream short (the client sees the
// connection close before Content-Length).
void VehicleData::read_file(std::shared_ptr<FileJob> job) {
  auto stream = std::make_shared<ByteStream>(kFileStreamBytes);
  auto exchange =
      std::make_unique<FtpExchange>(FtpExchange::Mode::kRead, job->system, job->component, job->path, ftp_seq(*job));
  exchange->read_into(stream, [job, stream](uint64_t size) {
    Answer a{200};
    a.content_type = "application/octet-stream";
    a.stream = stream;
    // ArduPilot's virtual files (@SYS/...) say a size they may not have: not promised.
    a.length = size > 0 && !job->path.starts_with('@') ? static_cast<int64_t>(size) : -1;
    (*job->answer)(std::move(a));
  });
  transactions_.run<FtpExchange>(this, job->system, job->component, "ftp", std::move(exchange),
                                 guarded(job->answer, [this, job, stream](End end, const FtpExchange& e) {
                                   ftp_seq(*job) = e.next_seq();
                                   stream->finish(e.complete());  // whole, though the close went unheard
                                   // Not opened: the answer is the refusal (once answered, this does nothing).
                                   (*job->answer)(refused(end, e, job->system, job->component, job->path));
                                 }));
}

}  // namespace mavswitch::vehicle
