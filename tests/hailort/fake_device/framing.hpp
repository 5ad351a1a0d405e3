// hRPC framing for the fake Hailo-10H device server: the message header, the
// two framings HailoRT has used, and blocking socket reads and writes.
//
// Wire format (HailoRT's hrpc/rpc_connection.{hpp,cpp} of each version):
//
//   header: 20 bytes, packed, little-endian (the x86/arm host's native order;
//           rpc_connection.hpp `rpc_message_header_t`, `#pragma pack(1)`):
//             u32 magic      0x8A554432 (RPC_MESSAGE_MAGIC)
//             u32 size       body bytes, at most 2048
//             u32 message_id the client's counter; a reply carries its request's
//             u32 action_id  HailoRpcActionID (hrpc_protocol/serializer.hpp)
//             u32 status     hailo_status; HAILO_UNINITIALIZED (1) in requests
//   body:   `size` bytes of protobuf (hrpc_protocol/rpc.proto)
//
//   Framing::sized_body (5.1.1, rpc_connection.cpp:39-68, 135-166): the header,
//     then exactly `size` body bytes (none when 0).
//   Framing::fixed_frames (5.2.0, rpc_connection.cpp:19, 30-33, 44-77): every
//     message is one 2068-byte frame, header + body + zero padding; the
//     reader reads 2068 bytes whatever `size` says.
//
//   Raw buffers follow a message with no framing of their own: their sizes are
//   in the message (a HEF's `hef_size`, RUN_ASYNC's `buffer_infos`).
//
// A read of zero bytes where a message starts is a clean end of stream
// (ReadStatus::closed); a stream that ends inside a message or buffer is
// ReadStatus::truncated. Thread safety: none here; callers serialise writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rig::test::fake_hailo {

inline constexpr uint32_t kRpcMagic = 0x8A554432u;
inline constexpr size_t kHeaderBytes = 20;
inline constexpr size_t kMaxBodyBytes = 2048;
inline constexpr size_t kFixedFrameBytes = kHeaderBytes + kMaxBodyBytes;

enum class Framing { sized_body, fixed_frames };

struct Header {
  uint32_t magic = kRpcMagic;
  uint32_t size = 0;
  uint32_t message_id = 0;
  uint32_t action_id = 0;
  uint32_t status = 0;
};

enum class ReadStatus { ok, closed, truncated, invalid };

struct Message {
  Header header;
  std::vector<uint8_t> body;  // exactly header.size bytes
};

// The bytes of one message in `framing`. `body` must be at most kMaxBodyBytes.
std::vector<uint8_t> encode_message(Framing framing, const Header& header,
                                    std::span<const uint8_t> body);

// How many bytes a message with `body_bytes` of body takes on the wire.
size_t message_bytes(Framing framing, size_t body_bytes);

Header decode_header(std::span<const uint8_t, kHeaderBytes> bytes);

// Reads exactly out.size() bytes from `fd`. ok, closed (EOF before the first
// byte), or truncated (EOF or an error after some bytes, or a socket error).
ReadStatus read_exact(int fd, std::span<uint8_t> out);

// Reads one message. invalid (with *why) on a bad magic or an oversized body,
// as rpc_connection.cpp's CHECKs refuse them.
ReadStatus read_message(int fd, Framing framing, Message* out, std::string* why);

// Writes all of `bytes`; false when the peer is gone.
bool write_all(int fd, std::span<const uint8_t> bytes);

}  // namespace rig::test::fake_hailo
