// The XML loader: layout rules, includes, and errors that say where.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "dialect/loader.hpp"
#include "support/test_support.hpp"

using namespace mavswitch::dialect;
namespace fs = std::filesystem;

namespace {

class LoaderTest : public ::testing::Test {
 protected:
  fs::path write(const std::string& name, const std::string& body) { return scratch_.write(name, body); }
  static std::string mavlink(const std::string& inner) {
    return "<?xml version=\"1.0\"?>\n<mavlink>\n" + inner + "</mavlink>\n";
  }
  std::string error_of(const fs::path& p) {
    try {
      load_dialect(p);
    } catch (const DialectError& e) {
      return e.what();
    }
    return "(no error)";
  }
  mavswitch::test::ScratchDir scratch_{"mavswitch-loader"};
  const fs::path& dir_ = scratch_.path();
};

}  // namespace

TEST_F(LoaderTest, WireOrderSortsBySizeAndKeepsExtensionsLast) {
  const auto p = write("d.xml", mavlink(R"(<messages>
  <message id="300" name="SAMPLE">
    <field type="uint8_t" name="a">a</field>
    <field type="uint32_t" name="b">b</field>
    <field type="char[3]" name="c">c</field>
    <field type="uint16_t" name="d">d</field>
    <field type="uint32_t" name="e">e</field>
    <extensions/>
    <field type="double" name="x">x</field>
    <field type="uint8_t" name="target_system">t</field>
  </message>
</messages>
)"));
  const Dialect d = load_dialect(p);
  ASSERT_EQ(d.messages.size(), 1u);
  const MessageDef& m = d.messages[0];
  // b, e (4 bytes), d (2), a, c (1); then extensions x, target_system in XML order.
  EXPECT_EQ(m.fields[1].wire_offset, 0);   // b
  EXPECT_EQ(m.fields[4].wire_offset, 4);   // e
  EXPECT_EQ(m.fields[3].wire_offset, 8);   // d
  EXPECT_EQ(m.fields[0].wire_offset, 10);  // a
  EXPECT_EQ(m.fields[2].wire_offset, 11);  // c[3]
  EXPECT_EQ(m.fields[5].wire_offset, 14);  // x
  EXPECT_EQ(m.fields[6].wire_offset, 22);  // target_system
  EXPECT_EQ(m.min_len, 14);
  EXPECT_EQ(m.max_len, 23);
  EXPECT_EQ(m.target_system_offset, 22);
  EXPECT_EQ(m.target_component_offset, -1);
  EXPECT_TRUE(m.fields[5].extension);
}

TEST_F(LoaderTest, ExtensionsDoNotChangeCrcExtra) {
  const auto base = write("a.xml", mavlink(R"(<messages><message id="1" name="M">
    <field type="uint16_t" name="a">a</field><field type="float[2]" name="b">b</field></message></messages>)"));
  const auto ext = write("b.xml", mavlink(R"(<messages><message id="1" name="M">
    <field type="uint16_t" name="a">a</field><field type="float[2]" name="b">b</field>
    <extensions/><field type="uint8_t" name="c">c</field></message></messages>)"));
  const auto renamed = write("c.xml", mavlink(R"(<messages><message id="1" name="M">
    <field type="uint16_t" name="a">a</field><field type="float[3]" name="b">b</field></message></messages>)"));
  const uint8_t crc = load_dialect(base).messages[0].crc_extra;
  EXPECT_EQ(load_dialect(ext).messages[0].crc_extra, crc);
  EXPECT_NE(load_dialect(renamed).messages[0].crc_extra, crc) << "array length is part of CRC_EXTRA";
}

TEST_F(LoaderTest, IncludesResolveRelativeToTheIncludingFileOnceEach) {
  fs::create_directories(dir_ / "sub");
  write("sub/shared.xml", mavlink(R"(<enums><enum name="E"><entry value="1" name="E_ONE"/></enum></enums>
    <messages><message id="5" name="SHARED"><field type="uint8_t" name="v">v</field></message></messages>)"));
  write("sub/left.xml", mavlink(R"(<include>shared.xml</include><include>../top.xml</include>
    <enums><enum name="E"><entry value="2" name="E_TWO"/></enum></enums>
    <messages><message id="6" name="LEFT"><field type="uint8_t" name="v">v</field></message></messages>)"));
  write("sub/right.xml", mavlink(R"(<include>shared.xml</include>
    <messages><message id="7" name="RIGHT"><field type="uint8_t" name="v">v</field></message></messages>)"));
  const auto top = write("top.xml", mavlink(R"(<include>sub/left.xml</include><include>sub/right.xml</include>
    <messages><message id="8" name="TOP"><field type="uint8_t" name="v">v</field></message></messages>)"));
  const Dialect d = load_dialect(top);  // a cycle (left includes top) and a repeat (shared twice)
  ASSERT_EQ(d.messages.size(), 4u);
  EXPECT_EQ(d.messages[0].name, "SHARED");
  EXPECT_EQ(d.files.size(), 4u);
  const EnumDef* e = d.find_enum("E");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->entries.size(), 2u) << "enum entries merge across files";
}

TEST_F(LoaderTest, MissingIncludeNamesFileAndLine) {
  const auto p = write("m.xml", mavlink("<include>nowhere.xml</include>\n"));
  const std::string err = error_of(p);
  EXPECT_NE(err.find(p.string() + ":3:"), std::string::npos) << err;
  EXPECT_NE(err.find("include not found: nowhere.xml"), std::string::npos) << err;
}

TEST_F(LoaderTest, MalformedXmlNamesFileAndLine) {
  const auto p = write("bad.xml", "<?xml version=\"1.0\"?>\n<mavlink>\n<messages>\n</mavlink>\n");
  const std::string err = error_of(p);
  EXPECT_NE(err.find(p.string() + ":4:"), std::string::npos) << err;
  EXPECT_NE(err.find("malformed XML"), std::string::npos) << err;
}

TEST_F(LoaderTest, UnknownFieldTypeNamesFileLineAndField) {
  const auto p = write("t.xml", mavlink(R"(<messages>
<message id="1" name="M">
<field type="uint128_t" name="huge">x</field>
</message></messages>
)"));
  const std::string err = error_of(p);
  EXPECT_NE(err.find(p.string() + ":5:"), std::string::npos) << err;
  EXPECT_NE(err.find("unknown field type 'uint128_t' for field M.huge"), std::string::npos) << err;
}

TEST_F(LoaderTest, TwoMessagesWithOneIdIsAnError) {
  write("other.xml",
        mavlink(
            R"(<messages><message id="9" name="FIRST"><field type="uint8_t" name="v">v</field></message></messages>)"));
  const auto p = write("dup.xml", mavlink(R"(<include>other.xml</include><messages>
<message id="9" name="SECOND"><field type="uint8_t" name="v">v</field></message></messages>
)"));
  const std::string err = error_of(p);
  EXPECT_NE(err.find("conflicts with 9 FIRST"), std::string::npos) << err;
  EXPECT_NE(err.find(p.string() + ":4:"), std::string::npos) << err;
}

// Regression (found by AddressSanitizer): the parent element's name was read through a view
// into the element stack after the stack had grown and moved.
TEST_F(LoaderTest, DeeplyNestedElementsAreHarmless) {
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += "<unknown" + std::to_string(i) + ">";
  for (int i = 199; i >= 0; --i) deep += "</unknown" + std::to_string(i) + ">";
  const auto p =
      write("deep.xml", mavlink(deep + R"(<messages><message id="1" name="M"><field type="uint8_t" name="v">v</field>
    </message></messages>)"));
  EXPECT_EQ(load_dialect(p).messages.size(), 1u);
}

TEST_F(LoaderTest, MissingFileIsAClearError) {
  EXPECT_NE(error_of(dir_ / "absent.xml").find("no such file"), std::string::npos);
}

TEST(OfficialDefinitions, EveryFileLoads) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(mavswitch::test::definitions_dir())) {
    if (entry.path().extension() != ".xml") continue;
    EXPECT_NO_THROW(load_dialect(entry.path())) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 15);
}

TEST(OfficialDefinitions, KnownFactsOfCommon) {
  const Dialect d = load_dialect(mavswitch::test::definitions_dir() / "common.xml");
  const MessageDef* hb = d.find("HEARTBEAT");
  ASSERT_NE(hb, nullptr);
  EXPECT_EQ(hb->crc_extra, 50);
  EXPECT_EQ(hb->max_len, 9);
  const MessageDef* cmd = d.find(76);  // COMMAND_LONG
  ASSERT_NE(cmd, nullptr);
  EXPECT_EQ(cmd->crc_extra, 152);
  EXPECT_EQ(cmd->max_len, 33);
  EXPECT_EQ(cmd->target_system_offset, 30);
  EXPECT_EQ(cmd->target_component_offset, 31);
  const MessageDef* sys = d.find(1);  // SYS_STATUS: extensions raise max_len only
  EXPECT_EQ(sys->min_len, 31);
  EXPECT_EQ(sys->max_len, 43);
  const EnumDef* mav_type = d.find_enum("MAV_TYPE");
  ASSERT_NE(mav_type, nullptr);
  EXPECT_EQ(mav_type->entries[2].name, "MAV_TYPE_QUADROTOR");
  EXPECT_EQ(mav_type->entries[2].value, 2u);
}
