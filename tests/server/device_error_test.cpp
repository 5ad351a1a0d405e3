// A device that fails while requests are on it: the server answers them with
// the error, and keeps their slots until the device hands their buffers back,
// so a later request never gets buffers the device may still read or write.
#include <gtest/gtest.h>

#include "rig/device.hpp"
#include "server/fake_device.hpp"
#include "server/server.hpp"

namespace rig::server {
namespace {

using testing::FakeControl;
using testing::FakeDevice;
using testing::FakeOptions;

std::vector<std::byte> pattern(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 5 + seed) & 0xff);
  return v;
}

bool wait_for(FakeControl& control, const std::function<bool(FakeControl&)>& done) {
  std::unique_lock lock(control.mu);
  return control.cv.wait_for(lock, std::chrono::minutes(1), [&] { return done(control); });
}

TEST(DeviceError, AFailedWaitKeepsTheSlotsOfTheRequestsStillOnTheDevice) {
  FakeOptions o;
  o.real_clock = true;  // a held wait_next gives up after its slice: the reader is not stuck
  auto control = o.control;
  ServerSettings s;
  s.listen = "127.0.0.1:0";
  auto server = Server::start(std::make_unique<FakeDevice>(o), s);
  ASSERT_TRUE(server) << server.error().to_string();
  auto d = open_device((*server)->address() + "?calibrate=0");
  ASSERT_TRUE(d) << d.error().to_string();
  ModelSource m;
  for (char c : std::string("in=8,out=8")) m.bytes.push_back(static_cast<std::byte>(c));
  ASSERT_TRUE((*d)->load(m));
  std::vector<std::byte> in_a = pattern(8, 1), in_b = pattern(8, 2), out_a(8), out_b(8);
  auto a = (*d)->bind(Bindings{{in_a}, {out_a}});
  auto b = (*d)->bind(Bindings{{in_b}, {out_b}});
  ASSERT_TRUE(a && b);

  // Two runs on the device, held there.
  control->set_hold(true);
  ASSERT_TRUE((*d)->submit(*a, 1));
  ASSERT_TRUE((*d)->submit(*b, 2));
  ASSERT_TRUE(wait_for(*control, [](FakeControl& c) { return c.submits == 2; }));
  // The device's wait fails and it hands nothing back: both are answered
  // with the error while their buffers stay on the device.
  {
    std::lock_guard lock(control->mu);
    control->wait_error = Error{ErrorCode::device, "fake: lost track of its queue"};
  }
  control->cv.notify_all();
  for (int k = 0; k < 2; ++k) {
    auto c = (*d)->wait_next(std::chrono::seconds(30));
    ASSERT_TRUE(c) << c.error().to_string();
    ASSERT_TRUE(c->error);
    EXPECT_NE(c->error->message.find("lost track"), std::string::npos) << c->error->message;
  }

  // A new run while the device still holds both: it gets a slot of its own
  // (the fake refuses a binding submitted twice, so reusing the first run's
  // slot would fail it).
  std::vector<std::byte> in_c = pattern(8, 3);
  std::copy(in_c.begin(), in_c.end(), in_a.begin());
  ASSERT_TRUE((*d)->submit(*a, 3));
  ASSERT_TRUE(wait_for(*control, [](FakeControl& c) { return c.submits == 3; }));
  control->set_hold(false);
  auto c = (*d)->wait_next(std::chrono::seconds(30));
  ASSERT_TRUE(c) << c.error().to_string();
  ASSERT_FALSE(c->error) << c->error->to_string();
  EXPECT_EQ(c->tag, 3u);
  EXPECT_EQ(out_a, testing::fake_expected(in_c, 0, 8));

  // Once the device has handed the failed runs back, their slots are free
  // again: runs keep going through the same few slots.
  for (uint64_t k = 4; k < 40; ++k) {
    auto r = (*d)->run(k % 2 ? *a : *b);
    ASSERT_TRUE(r) << k << ": " << r.error().to_string();
  }
}

}  // namespace
}  // namespace rig::server
