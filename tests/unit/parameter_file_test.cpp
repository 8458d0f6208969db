// Parameter files: Mission Planner's and QGroundControl's, written and read back.
#include "vehicle/parameter_file.hpp"

#include <gtest/gtest.h>

namespace mavswitch::vehicle {
namespace {

std::vector<VehicleParameters::Parameter> some() {
  return {{"WPNAV_SPEED", 0.30000001192092896, 9, 0, true},  // a float: written as 0.3
          {"FORMAT_VERSION", 120, 4, 1, true},
          {"MISSING", 0, 9, 2, false}};
}

TEST(ParameterFile, MissionPlannersAndQGroundControlsBothWays) {
  const std::string mp = parameter_file(some(), ParameterFormat::kMissionPlanner, 1, 1);
  EXPECT_EQ(mp, "WPNAV_SPEED,0.3\nFORMAT_VERSION,120\n");
  const std::string qgc = parameter_file(some(), ParameterFormat::kQGroundControl, 3, 1);
  EXPECT_NE(
      qgc.find("# Vehicle-Id Component-Id Name Value Type\n3\t1\tWPNAV_SPEED\t0.3\t9\n3\t1\tFORMAT_VERSION\t120\t4\n"),
      std::string::npos)
      << qgc;
  std::string error;
  for (const std::string& text : {mp, qgc}) {
    const auto lines = parse_parameter_file(text, &error);
    ASSERT_TRUE(lines) << error;
    ASSERT_EQ(lines->size(), 2u);
    EXPECT_EQ((*lines)[0].name, "WPNAV_SPEED");
    EXPECT_FLOAT_EQ(float((*lines)[0].value), 0.3f);
    EXPECT_EQ((*lines)[1].value, 120);
  }
  EXPECT_EQ(parse_parameter_file(qgc, &error)->at(1).type, 4);
  // Comments, blank lines, CRLF, a space or tab instead of the comma.
  const auto loose = parse_parameter_file("# saved\r\n\r\nRTL_ALT 1500\r\nACRO_YAW_P\t4.5\n", &error);
  ASSERT_TRUE(loose) << error;
  EXPECT_EQ(loose->size(), 2u);
}

TEST(ParameterFile, WhatIsNotOneIsRefusedNamingTheLine) {
  std::string error;
  EXPECT_FALSE(parse_parameter_file("RTL_ALT,1500\nRTL_ALT=3\n", &error));
  EXPECT_NE(error.find("line 2"), std::string::npos) << error;
  EXPECT_FALSE(parse_parameter_file("A_NAME_LONGER_THAN_16,1\n", &error));
  EXPECT_FALSE(parse_parameter_file("RTL_ALT,nan\n", &error));
  EXPECT_FALSE(parse_parameter_file("1\t1\tRTL_ALT\t3\t42\n", &error)) << "no MAV_PARAM_TYPE 42";
}

}  // namespace
}  // namespace mavswitch::vehicle
