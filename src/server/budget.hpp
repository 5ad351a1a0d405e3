// ByteBudget: the bytes a server holds for its clients at once (model uploads
// being received, models kept for reloading, run slots), against one
// server-wide limit, max_pending_bytes. A ByteHold is one reservation; it
// gives its bytes back when destroyed.
//
// Thread safety: reserve() and the holds' destructors may run on any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "rig/error.hpp"

namespace rig::server {

class ByteBudget;

class ByteHold {
 public:
  ByteHold() = default;
  ByteHold(ByteHold&& o) noexcept
      : budget_(std::move(o.budget_)), bytes_(std::exchange(o.bytes_, 0)) {}
  ByteHold& operator=(ByteHold&& o) noexcept {
    if (this != &o) {
      release();
      budget_ = std::move(o.budget_);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  ByteHold(const ByteHold&) = delete;
  ByteHold& operator=(const ByteHold&) = delete;
  ~ByteHold() { release(); }

  uint64_t bytes() const { return bytes_; }

 private:
  friend class ByteBudget;
  ByteHold(std::shared_ptr<ByteBudget> budget, uint64_t bytes)
      : budget_(std::move(budget)), bytes_(bytes) {}
  inline void release();

  std::shared_ptr<ByteBudget> budget_;
  uint64_t bytes_ = 0;
};

class ByteBudget : public std::enable_shared_from_this<ByteBudget> {
 public:
  explicit ByteBudget(uint64_t limit) : limit_(limit) {}

  // Holds `bytes` more, or fails with limit_exceeded naming max_pending_bytes;
  // `what` says what the bytes are for ("message 3 (load_model): its model of
  // 1000 bytes").
  Result<ByteHold> reserve(uint64_t bytes, const std::string& what) {
    uint64_t held = held_.load();
    for (;;) {
      if (bytes > limit_ || held > limit_ - bytes)
        return fail(ErrorCode::limit_exceeded,
                    what + " would take the bytes this server holds for its clients from " +
                        std::to_string(held) + " to " + std::to_string(held + bytes) +
                        "; max_pending_bytes is " + std::to_string(limit_) +
                        " (rig serve --max-pending-bytes)");
      if (held_.compare_exchange_weak(held, held + bytes)) break;
    }
    return ByteHold(shared_from_this(), bytes);
  }

  uint64_t held() const { return held_.load(); }
  uint64_t limit() const { return limit_; }

 private:
  friend class ByteHold;
  void give_back(uint64_t bytes) { held_.fetch_sub(bytes); }

  const uint64_t limit_;
  std::atomic<uint64_t> held_{0};
};

inline void ByteHold::release() {
  if (budget_ && bytes_ > 0) budget_->give_back(bytes_);
  budget_.reset();
  bytes_ = 0;
}

}  // namespace rig::server
