#pragma once
/// C++ wrapper of the asynchronous channels of channel.h.
#include <cassert>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "asyncsolve/channel.h"

namespace asyncsolve {

/// A channel call failed; status() is the C status code.
class ChannelError : public std::runtime_error {
 public:
  ChannelError(int status, const std::string& call)
      : std::runtime_error(call + ": " + as_strerror(status)), status_(status) {}
  int status() const noexcept { return status_; }

 private:
  int status_;
};

/// Throws ChannelError unless `status` is AS_SUCCESS.
inline void check_channel(int status, const char* call) {
  if (status != AS_SUCCESS) throw ChannelError(status, call);
}

/// One end of an asynchronous channel (see channel.h for the semantics).
/// Move-only. destroy() (or destroy_many()) is collective between the two
/// ends: call it at a point both reach, before the object goes away. The
/// destructor never communicates: destroying an open channel is a bug,
/// asserted in debug builds (except while an exception unwinds the stack,
/// where communicating could deadlock); its requests are then abandoned.
class Channel {
 public:
  Channel() = default;
  /// Collective between the two ends: creates the channel `config` describes.
  explicit Channel(const as_channel_config& config) {
    check_channel(as_channel_create(&handle_, &config), "as_channel_create");
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  Channel(Channel&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  /// Only into a closed channel (destroy() it first: that is collective).
  Channel& operator=(Channel&& other) noexcept {
    assert(handle_ == nullptr && "asyncsolve::Channel: move-assigned over an open channel");
    if (this != &other) handle_ = std::exchange(other.handle_, nullptr);
    return *this;
  }
  ~Channel() {
    assert((handle_ == nullptr || std::uncaught_exceptions() > 0) &&
           "asyncsolve::Channel destroyed while open: call destroy() at a point both ends reach");
  }

  /// Creates several channels at once, with no ordering constraint between
  /// them (each is collective between its two ends).
  static std::vector<Channel> create_many(std::span<const as_channel_config> configs) {
    std::vector<as_channel*> handles(configs.size(), nullptr);
    check_channel(
        as_channels_create(static_cast<int>(configs.size()), handles.data(), configs.data()),
        "as_channels_create");
    std::vector<Channel> out(configs.size());
    for (std::size_t i = 0; i < configs.size(); ++i) out[i].handle_ = handles[i];
    return out;
  }

  /// Destroys several channels at once, progressing them together.
  static void destroy_many(std::span<Channel> channels) {
    std::vector<as_channel*> handles;
    for (Channel& c : channels)
      if (c.handle_ != nullptr) handles.push_back(c.handle_);
    for (Channel& c : channels) c.handle_ = nullptr;
    check_channel(as_channels_destroy(static_cast<int>(handles.size()), handles.data()),
                  "as_channels_destroy");
  }

  /// Collective between the two ends: completes everything in flight and
  /// closes the channel. No-op on a closed channel.
  void destroy() {
    if (handle_ != nullptr) check_channel(as_channel_destroy(&handle_), "as_channel_destroy");
  }

  bool is_open() const noexcept { return handle_ != nullptr; }
  /// True if send() would not block.
  bool can_send() {
    int flag = 0;
    check_channel(as_channel_can_send(handle_, &flag), "as_channel_can_send");
    return flag != 0;
  }
  /// Sends the send buffer (blocks while the channel is full).
  void send() { check_channel(as_channel_send(handle_), "as_channel_send"); }
  /// Sends the send buffer if the channel has room; false (nothing sent) if full.
  bool try_send() {
    int sent = 0;
    check_channel(as_channel_try_send(handle_, &sent), "as_channel_try_send");
    return sent != 0;
  }
  /// True if a message arrived since the last recv() (always, in racy mode).
  bool can_recv() {
    int flag = 0;
    check_channel(as_channel_can_recv(handle_, &flag), "as_channel_can_recv");
    return flag != 0;
  }
  /// Delivers the newest message (async) or progresses (racy); returns how
  /// many messages arrived since the last call.
  int recv() {
    int n = 0;
    check_channel(as_channel_recv(handle_, &n), "as_channel_recv");
    return n;
  }
  void progress() { check_channel(as_channel_progress(handle_), "as_channel_progress"); }
  /// as_channels_wait_any on the open channels of `channels`: waits (with
  /// back-off, progressing them all) for a message on any of them, at most
  /// `timeout_s` seconds. Returns the position in `channels` of the first
  /// one with news, or -1 at the timeout. Local.
  static int wait_any(std::span<Channel> channels, double timeout_s) {
    std::vector<as_channel*> handles;
    std::vector<int> positions;
    handles.reserve(channels.size());
    for (std::size_t i = 0; i < channels.size(); ++i) {
      if (channels[i].handle_ == nullptr) continue;
      handles.push_back(channels[i].handle_);
      positions.push_back(static_cast<int>(i));
    }
    int index = -1;
    check_channel(
        as_channels_wait_any(static_cast<int>(handles.size()), handles.data(), timeout_s, &index),
        "as_channels_wait_any");
    return index < 0 ? -1 : positions[static_cast<std::size_t>(index)];
  }
  as_channel_stats stats() const {
    as_channel_stats s{};
    check_channel(as_channel_get_stats(handle_, &s), "as_channel_get_stats");
    return s;
  }
  int in_flight() const {
    int n = 0;
    check_channel(as_channel_in_flight(handle_, &n), "as_channel_in_flight");
    return n;
  }
  as_channel* handle() const noexcept { return handle_; }

 private:
  as_channel* handle_ = nullptr;
};

}  // namespace asyncsolve
