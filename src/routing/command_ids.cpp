// Which messages command a vehicle or change what it holds: what a Commands = deny link may
// not send (routing.hpp: is_command).
#include "routing/routing.hpp"

namespace mavswitch::routing {

bool is_command(uint32_t msgid) noexcept {
  switch (msgid) {
    case 11:   // SET_MODE
    case 23:   // PARAM_SET
    case 38:   // MISSION_WRITE_PARTIAL_LIST
    case 39:   // MISSION_ITEM
    case 41:   // MISSION_SET_CURRENT
    case 44:   // MISSION_COUNT (an upload starts)
    case 45:   // MISSION_CLEAR_ALL
    case 48:   // SET_GPS_GLOBAL_ORIGIN
    case 50:   // PARAM_MAP_RC
    case 69:   // MANUAL_CONTROL
    case 70:   // RC_CHANNELS_OVERRIDE
    case 73:   // MISSION_ITEM_INT
    case 75:   // COMMAND_INT
    case 76:   // COMMAND_LONG
    case 80:   // COMMAND_CANCEL
    case 82:   // SET_ATTITUDE_TARGET
    case 84:   // SET_POSITION_TARGET_LOCAL_NED
    case 86:   // SET_POSITION_TARGET_GLOBAL_INT
    case 110:  // FILE_TRANSFER_PROTOCOL (it writes and removes files as well as reading them)
    case 121:  // LOG_ERASE
    case 138:  // ATT_POS_MOCAP (a position the vehicle flies by)
    case 243:  // SET_HOME_POSITION
    case 256:  // SETUP_SIGNING
    case 282:  // GIMBAL_MANAGER_SET_ATTITUDE
    case 284:  // GIMBAL_DEVICE_SET_ATTITUDE
    case 287:  // GIMBAL_MANAGER_SET_PITCHYAW
    case 288:  // GIMBAL_MANAGER_SET_MANUAL_CONTROL
    case 323:  // PARAM_EXT_SET
      return true;
    default: return false;
  }
}

}  // namespace mavswitch::routing
