// Slot leases (server/device_host.hpp): a lease and its control block live
// in the slot itself, the slot is free again only once the last reference
// is gone, and a lease keeps its entry (and so its slot) alive.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "server/device_host.hpp"

namespace rig::server {
namespace {

std::shared_ptr<ModelEntry> entry_with(uint32_t max_slots) {
  auto entry = std::make_shared<ModelEntry>();
  entry->handle = 7;
  entry->max_slots = max_slots;
  entry->info.inputs.push_back({"in", ElementType::u8, {64}, 64});
  entry->info.outputs.push_back({"out", ElementType::u8, {16}, 16});
  return entry;
}

TEST(SlotLease, TheSlotStaysBusyUntilTheLastReferenceGoesAndIsThenLeasedAgain) {
  auto entry = entry_with(2);
  auto first = acquire_slot(entry);
  ASSERT_TRUE(first) << first.error().message;
  Slot* slot = &(*first)->slot();
  EXPECT_TRUE(slot->busy.load());
  EXPECT_EQ(slot->inputs.at(0).size(), 64u);
  EXPECT_EQ(slot->outputs.at(0).size(), 16u);

  std::shared_ptr<SlotLease> copy = *first;  // a reply still being written
  first->reset();
  EXPECT_TRUE(slot->busy.load()) << "freed while a reference remained";
  auto second = acquire_slot(entry);  // must take a new slot
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_NE(&(*second)->slot(), slot);
  EXPECT_EQ(entry->slots.size(), 2u);

  copy.reset();
  EXPECT_FALSE(slot->busy.load());
  auto third = acquire_slot(entry);  // the freed slot, not a third one
  ASSERT_TRUE(third) << third.error().message;
  EXPECT_EQ(&(*third)->slot(), slot);
  EXPECT_EQ(entry->slots.size(), 2u);
}

// No allocation per run: the lease object lies inside its slot.
TEST(SlotLease, TheLeaseLivesInItsSlotsOwnStorage) {
  auto entry = entry_with(1);
  auto lease = acquire_slot(entry);
  ASSERT_TRUE(lease) << lease.error().message;
  const auto* at = reinterpret_cast<const std::byte*>(lease->get());
  const Slot& slot = (*lease)->slot();
  EXPECT_GE(at, slot.lease_storage);
  EXPECT_LE(at + sizeof(SlotLease), slot.lease_storage + sizeof slot.lease_storage);
}

// A reply written on another thread drops the last reference while the
// reader leases again: the slot comes back only once it is free, and the
// same storage serves every lease (run under the sanitizers in CI).
TEST(SlotLease, ReleasesOnAnotherThreadHandTheSameSlotBack) {
  auto entry = entry_with(1);
  std::atomic<std::shared_ptr<void>*> handed{nullptr};
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    while (!stop.load()) {
      if (auto* held = handed.exchange(nullptr)) {
        held->reset();  // the last reference: frees the slot
        delete held;
      }
      std::this_thread::yield();
    }
  });
  int leased = 0;
  Slot* first = nullptr;
  while (leased < 2000) {
    auto lease = acquire_slot(entry);
    if (!lease) {
      EXPECT_EQ(lease.error().code, ErrorCode::queue_full);  // still being written
      std::this_thread::yield();
      continue;
    }
    if (!first) first = &(*lease)->slot();
    EXPECT_EQ(&(*lease)->slot(), first);
    (*lease)->slot().inputs.at(0)[0] = std::byte{1};  // the reader's use of the buffers
    auto* hold = new std::shared_ptr<void>(std::move(*lease));
    while (handed.load() != nullptr) std::this_thread::yield();
    handed.store(hold);
    ++leased;
  }
  while (handed.load() != nullptr) std::this_thread::yield();
  stop.store(true);
  writer.join();
  EXPECT_EQ(entry->slots.size(), 1u);
  EXPECT_FALSE(first->busy.load());
}

TEST(SlotLease, AFullEntryRefusesWithQueueFullUntilALeaseEnds) {
  auto entry = entry_with(1);
  auto held = acquire_slot(entry);
  ASSERT_TRUE(held) << held.error().message;
  auto refused = acquire_slot(entry);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::queue_full);
  EXPECT_NE(refused.error().message.find("model handle 7 already has 1 requests in flight"),
            std::string::npos)
      << refused.error().message;
  held->reset();
  EXPECT_TRUE(acquire_slot(entry));
}

TEST(SlotLease, ALeaseKeepsItsEntryAndSlotAliveAfterEveryOtherReferenceIsGone) {
  auto entry = entry_with(1);
  std::weak_ptr<ModelEntry> watch = entry;
  auto lease = acquire_slot(entry);
  ASSERT_TRUE(lease) << lease.error().message;
  std::shared_ptr<SlotLease> last = std::move(*lease);
  entry.reset();  // the handle table let go (a released model, a closed connection)
  ASSERT_FALSE(watch.expired());
  last->slot().outputs.at(0)[0] = std::byte{42};  // still the entry's slot
  EXPECT_EQ(last->entry()->slots.at(0)->outputs.at(0)[0], std::byte{42});
  last.reset();  // frees the control block inside the slot, then the entry
  EXPECT_TRUE(watch.expired());
}

// Issue 25 item 5, the server's part: a device that declares page
// alignment and padding (the hailo device: sysconf(_SC_PAGESIZE)) gets run
// slots whose views are aligned and of the tensors' exact sizes, inside
// allocations padded to whole pages.
TEST(SlotLease, BuffersHonourTheDevicesAlignmentAndPadding) {
  auto entry = entry_with(2);
  entry->buffer_alignment = 16384;
  entry->buffer_padding = 16384;
  auto lease = acquire_slot(entry);
  ASSERT_TRUE(lease) << lease.error().message;
  const Slot& slot = (*lease)->slot();
  ASSERT_EQ(slot.inputs.size(), 1u);
  ASSERT_EQ(slot.outputs.size(), 1u);
  ASSERT_EQ(slot.storage.size(), 2u);
  EXPECT_EQ(slot.inputs[0].size(), 64u);
  EXPECT_EQ(slot.outputs[0].size(), 16u);
  for (size_t i = 0; i < 2; ++i) {
    const std::span<std::byte> view = i == 0 ? slot.inputs[0] : slot.outputs[0];
    EXPECT_EQ(reinterpret_cast<uintptr_t>(view.data()) % 16384, 0u);
    const auto& a = slot.storage[i];
    EXPECT_GE(static_cast<size_t>(a.data() + a.size() - view.data()), 16384u);
  }
  EXPECT_EQ(slot.input_spans.at(0).data(), slot.inputs[0].data());
}

}  // namespace
}  // namespace rig::server
