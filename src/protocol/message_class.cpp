#include "protocol/message_class.hpp"

#include <algorithm>
#include <iterator>

namespace mavswitch::protocol {
namespace {

// common.xml and ardupilotmega.xml ids, sorted.
constexpr uint32_t kProtocol[] = {
    11,                                                // SET_MODE
    20,  21,  22,  23,                                 // PARAM_REQUEST_READ/_LIST, PARAM_VALUE, PARAM_SET
    37,  38,  39,  40,  41,  42,  43, 44, 45, 46, 47,  // MISSION_* (partial lists .. ACK)
    50,                                                // PARAM_MAP_RC
    51,                                                // MISSION_REQUEST_INT
    66,                                                // REQUEST_DATA_STREAM
    73,                                                // MISSION_ITEM_INT
    75,  76,  77,  80,                                 // COMMAND_INT, COMMAND_LONG, COMMAND_ACK, COMMAND_CANCEL
    110, 111,                                          // FILE_TRANSFER_PROTOCOL, TIMESYNC
    117, 118, 119, 120, 121, 122,                      // LOG_REQUEST_LIST .. LOG_REQUEST_END
    123,                                               // GPS_INJECT_DATA
    160, 161, 175, 176,                                // FENCE_POINT, FENCE_FETCH_POINT, RALLY_POINT, RALLY_FETCH_POINT
    233,                                               // GPS_RTCM_DATA: fragments of one correction
    266, 267, 268,                                     // LOGGING_DATA, LOGGING_DATA_ACKED, LOGGING_ACK
    320, 321, 322, 323, 324,                           // PARAM_EXT_REQUEST_READ/_LIST, _VALUE, _SET, _ACK
};
static_assert(std::is_sorted(std::begin(kProtocol), std::end(kProtocol)));

constexpr uint32_t kStatus[] = {0, 1, 245, 253};

}  // namespace

bool is_protocol_message(uint32_t msgid) noexcept {
  return std::binary_search(std::begin(kProtocol), std::end(kProtocol), msgid);
}

bool is_status_message(uint32_t msgid) noexcept {
  return std::binary_search(std::begin(kStatus), std::end(kStatus), msgid);
}

}  // namespace mavswitch::protocol
