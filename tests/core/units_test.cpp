#include "rig/units.hpp"

#include <gtest/gtest.h>

namespace rig {
namespace {

using namespace std::chrono_literals;

TEST(Units, Durations) {
  EXPECT_EQ(*parse_duration("2.27ms"), Nanos(2270000));
  EXPECT_EQ(*parse_duration("3s"), Nanos(3000000000));
  EXPECT_EQ(*parse_duration("500us"), Nanos(500000));
  EXPECT_EQ(*parse_duration("10m"), Nanos(600000000000));
  EXPECT_EQ(*parse_duration("1e-3s"), Nanos(1000000));
  EXPECT_EQ(parse_duration("10").error().code, ErrorCode::invalid_argument);
  EXPECT_NE(parse_duration("10").error().message.find("needs a unit"), std::string::npos);
  EXPECT_FALSE(parse_duration("fast").has_value());
  EXPECT_FALSE(parse_duration("3 parsecs").has_value());
}

// Out of the range where sums and products of them fit int64 nanoseconds
// (or uint64 bytes), a quantity is refused, naming the bound.
TEST(Units, QuantitiesOutOfRangeAreRefused) {
  EXPECT_EQ(*parse_duration("1000000s"), kMaxDuration);
  EXPECT_EQ(*parse_duration("-1000000s"), -kMaxDuration);
  for (const char* text : {"1000001s", "1e300s", "-1e300ms", "1e9h"}) {
    auto d = parse_duration(text);
    ASSERT_FALSE(d) << text;
    EXPECT_NE(d.error().message.find("out of range (at most 1e6 s"), std::string::npos)
        << d.error().message;
  }
  EXPECT_EQ(*parse_bytes("1e18B"), 1e18);
  for (const char* text : {"1e300MB", "2EB", "1e19", "-1e300GB"}) {
    auto b = parse_bytes(text);
    if (std::string(text) == "2EB") {
      EXPECT_FALSE(b);  // an unknown unit
      continue;
    }
    ASSERT_FALSE(b) << text;
    EXPECT_NE(b.error().message.find("out of range (at most 1e18 bytes)"), std::string::npos)
        << b.error().message;
  }
  EXPECT_FALSE(parse_bandwidth("1e300MB/s"));
  EXPECT_EQ(*parse_frame_rate("1e9/s"), 1e9);
  // A rate needs its unit, as a duration does (issue 26, item 11).
  auto bare = parse_frame_rate("30");
  ASSERT_FALSE(bare);
  EXPECT_NE(bare.error().message.find("needs a unit: e.g. 30/s"), std::string::npos)
      << bare.error().message;
  for (const char* text : {"1e-300/s", "1e10Hz"}) {
    auto r = parse_frame_rate(text);
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error().message.find("out of range"), std::string::npos) << r.error().message;
  }
}

TEST(Units, SizesUseSiAndBinaryPrefixes) {
  EXPECT_DOUBLE_EQ(*parse_bytes("1MB"), 1e6);
  EXPECT_DOUBLE_EQ(*parse_bytes("1MiB"), 1048576);
  EXPECT_DOUBLE_EQ(*parse_bytes("150528"), 150528);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("290MB/s"), 290e6);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("1.2GB/s"), 1.2e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("100MiB/s"), 100 * 1048576.0);
  EXPECT_FALSE(parse_bandwidth("290MB").has_value());
  EXPECT_FALSE(parse_bytes("3 furlongs").has_value());
}

TEST(Units, Specs) {
  auto s = parse_spec("sim:compute=2.27ms,bw=290MB/s,lat=0.45ms,depth=32");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->kind, "sim");
  EXPECT_EQ(s->params.at("bw"), "290MB/s");
  EXPECT_EQ(s->params.size(), 4u);
  EXPECT_EQ(parse_spec("cpu")->kind, "cpu");
  EXPECT_FALSE(parse_spec("sim:compute").has_value());
  EXPECT_FALSE(parse_spec("sim:depth=1,depth=2").has_value());
  EXPECT_FALSE(parse_spec("").has_value());
}

TEST(Units, Counts) {
  EXPECT_EQ(*parse_count("32"), 32u);
  EXPECT_FALSE(parse_count("-1").has_value());
  EXPECT_FALSE(parse_count("1.5").has_value());
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_ms(2.27), "2.270 ms");
  EXPECT_EQ(format_ms(0.5), "500.0 us");
  EXPECT_EQ(format_ms(1500), "1.500 s");
  EXPECT_EQ(format_bytes(150528), "150.5 kB");
  EXPECT_EQ(format_rate(290e6), "290.0 MB/s");
}

// "Gb" (bits) for "GB" names the byte unit rig reads (issue 38, item 9).
TEST(Units, BitUnitsSuggestTheByteUnit) {
  const auto bw = parse_bandwidth("10Gb/s");
  ASSERT_FALSE(bw);
  EXPECT_NE(bw.error().message.find("sizes are bytes: 'GB'"), std::string::npos)
      << bw.error().message;
  const auto size = parse_bytes("8Mb");
  ASSERT_FALSE(size);
  EXPECT_NE(size.error().message.find("'MB'"), std::string::npos) << size.error().message;
}

}  // namespace
}  // namespace rig
