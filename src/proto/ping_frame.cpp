// Pings without protobuf (wire.hpp "Pings"): the canonical bodies are what
// Body serializes for an empty ping_request / ping_reply, computed once from
// rig.proto, so the bytes on the wire are those encode_frame() sends.
#include <cstring>

#include "proto/wire.hpp"
#include "proto/wire_bytes.hpp"

namespace rig::wire {

using detail::load_u32;

namespace {

std::string serialized_ping(bool reply) {
  pb::Body body;
  if (reply) {
    body.mutable_ping_reply();
  } else {
    body.mutable_ping_request();
  }
  return body.SerializeAsString();
}

}  // namespace

std::span<const std::byte> ping_body(bool reply) {
  static const std::string request = serialized_ping(false), answer = serialized_ping(true);
  const std::string& s = reply ? answer : request;
  return std::as_bytes(std::span(s.data(), s.size()));
}

void encode_ping_into(OutFrame& out, uint32_t message_id, bool reply) {
  const auto body = ping_body(reply);
  out.body.assign(reinterpret_cast<const char*>(body.data()), body.size());
  out.buffers.clear();
  Header h;
  h.message_id = message_id;
  h.action = Action::ping;
  h.body_size = static_cast<uint32_t>(body.size());
  out.header = encode_header(h);
}

size_t whole_ping(std::span<const std::byte> bytes, bool reply, const Limits& limits,
                  uint32_t& message_id) {
  const auto body = ping_body(reply);
  const size_t size = kHeaderSize + body.size();
  if (bytes.size() < size || load_u32(bytes.data()) != kMagic ||
      load_u32(bytes.data() + 4) != body.size() || body.size() > limits.max_body_bytes ||
      load_u32(bytes.data() + 12) != static_cast<uint32_t>(Action::ping) ||
      load_u32(bytes.data() + 16) != static_cast<uint32_t>(Status::ok) ||
      std::memcmp(bytes.data() + kHeaderSize, body.data(), body.size()) != 0)
    return 0;
  message_id = load_u32(bytes.data() + 8);
  return size;
}

}  // namespace rig::wire
