// Pings without protobuf (wire.hpp "Pings"): the canonical bodies are what
// Body serializes for an empty ping_request / ping_reply, computed once from
// rig.proto, so the bytes on the wire are those encode_frame() sends.
#include <cstring>

#include "proto/wire.hpp"

namespace rig::wire {
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
  if (bytes.size() < size) return 0;
  auto h = decode_header(bytes.first<kHeaderSize>(), limits);  // magic, max_body_bytes
  if (!h || h->body_size != body.size() || h->action != Action::ping || h->status != Status::ok ||
      std::memcmp(bytes.data() + kHeaderSize, body.data(), body.size()) != 0)
    return 0;
  message_id = h->message_id;
  return size;
}

}  // namespace rig::wire
