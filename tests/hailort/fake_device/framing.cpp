#include "framing.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <cstring>

namespace rig::test::fake_hailo {

namespace {

void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

size_t message_bytes(Framing framing, size_t body_bytes) {
  return framing == Framing::fixed_frames ? kFixedFrameBytes : kHeaderBytes + body_bytes;
}

std::vector<uint8_t> encode_message(Framing framing, const Header& header,
                                    std::span<const uint8_t> body) {
  std::vector<uint8_t> out(message_bytes(framing, body.size()), 0);
  put_u32(&out[0], header.magic);
  put_u32(&out[4], static_cast<uint32_t>(body.size()));
  put_u32(&out[8], header.message_id);
  put_u32(&out[12], header.action_id);
  put_u32(&out[16], header.status);
  if (!body.empty()) std::memcpy(&out[kHeaderBytes], body.data(), body.size());
  return out;
}

Header decode_header(std::span<const uint8_t, kHeaderBytes> bytes) {
  Header h;
  h.magic = get_u32(&bytes[0]);
  h.size = get_u32(&bytes[4]);
  h.message_id = get_u32(&bytes[8]);
  h.action_id = get_u32(&bytes[12]);
  h.status = get_u32(&bytes[16]);
  return h;
}

ReadStatus read_exact(int fd, std::span<uint8_t> out) {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::recv(fd, out.data() + done, out.size() - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return done == 0 && n == 0 ? ReadStatus::closed : ReadStatus::truncated;
    done += static_cast<size_t>(n);
    // HailoRT's client sets no TCP_NODELAY (common/os/posix/socket.cpp) and
    // writes a request and its buffers in separate writes: with this side's
    // delayed acknowledgement its second write would wait ~40 ms (Nagle).
    // A device on PCIe has no such wait, so the fake acknowledges at once
    // (TCP_QUICKACK does not stay set: again after every read).
    const int one = 1;
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
  }
  return ReadStatus::ok;
}

ReadStatus read_message(int fd, Framing framing, Message* out, std::string* why) {
  std::vector<uint8_t> head(framing == Framing::fixed_frames ? kFixedFrameBytes : kHeaderBytes);
  ReadStatus st = read_exact(fd, head);
  if (st != ReadStatus::ok) return st;
  out->header = decode_header(std::span<const uint8_t, kHeaderBytes>(head.data(), kHeaderBytes));
  if (out->header.magic != kRpcMagic) {
    *why = "bad magic " + std::to_string(out->header.magic);
    return ReadStatus::invalid;
  }
  if (out->header.size > kMaxBodyBytes) {
    *why = "body size " + std::to_string(out->header.size) + " > " + std::to_string(kMaxBodyBytes);
    return ReadStatus::invalid;
  }
  if (framing == Framing::fixed_frames) {
    out->body.assign(head.begin() + kHeaderBytes,
                     head.begin() + static_cast<std::ptrdiff_t>(kHeaderBytes + out->header.size));
    return ReadStatus::ok;
  }
  out->body.assign(out->header.size, 0);
  if (out->header.size == 0) return ReadStatus::ok;
  st = read_exact(fd, out->body);
  return st == ReadStatus::closed ? ReadStatus::truncated : st;
}

bool write_all(int fd, std::span<const uint8_t> bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace rig::test::fake_hailo
