// asyncsolve._core.Channel: the channel C API (channel.h) over NumPy
// buffers. A channel keeps its two arrays alive (it reads the send array in
// send() and writes the receive array in recv(), and in racy mode in any
// call that progresses it) until it is destroyed; nothing is copied between
// them and the channel's own transfers. Every call that progresses the
// channel releases the GIL.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "asyncsolve/channel.h"
#include "asyncsolve/core/error.hpp"
#include "bindings.hpp"

namespace nb = nanobind;

namespace asyncsolve::python {
namespace {

using Buffer = nb::ndarray<nb::c_contig, nb::device::cpu>;

/// Throws for a failed channel call: InputError for a bad argument or a
/// mismatch of the two ends, RuntimeFailure otherwise.
void check(int status, const char* call) {
  if (status == AS_SUCCESS) return;
  const std::string message = fmt::format("{}: {}", call, as_strerror(status));
  if (status == AS_ERR_ARG || status == AS_ERR_MISMATCH) throw core::InputError(message);
  throw core::RuntimeFailure(message);
}

int parse_mode(const std::string& mode) {
  if (mode == "async") return AS_MODE_ASYNC;
  if (mode == "racy") return AS_MODE_RACY;
  throw core::InputError(fmt::format("mode '{}': expected async or racy", mode));
}

int parse_transport(const std::string& transport) {
  if (transport == "mpi") return AS_TRANSPORT_MPI;
  if (transport == "rma") return AS_TRANSPORT_RMA;
  throw core::InputError(fmt::format("transport '{}': expected mpi or rma", transport));
}

/// `array` as a channel uses it: in place, so the caller's later writes
/// travel and arrivals land in it. A C-contiguous, writeable CPU array is
/// taken without conversion; anything else (a strided view, a Fortran-
/// ordered or transposed array, a read-only one, not an array) is refused,
/// since a converted copy would not be the caller's array.
Buffer in_place(const nb::object& array, const char* what, int peer) {
  Buffer out;
  if (nb::try_cast<Buffer>(array, out, /*convert=*/false)) return out;
  std::string why = fmt::format("a {}", nb::type_name(array.type()).c_str());
  if (nb::hasattr(array, "flags")) {
    const nb::object flags = array.attr("flags");
    if (!nb::cast<bool>(flags.attr("c_contiguous"))) {
      why = "not C-contiguous (a strided, Fortran-ordered or transposed view)";
    } else if (!nb::cast<bool>(flags.attr("writeable"))) {
      why = "read-only";
    }
  }
  throw core::InputError(fmt::format(
      "channel to rank {}: the {} array is {}: expected a C-contiguous, writeable NumPy array "
      "(the channel uses it in place; numpy.ascontiguousarray makes one to keep)",
      peer, what, why));
}

/// One end of a channel and the arrays it uses.
class Channel {
 public:
  Channel(as_channel* channel, nb::object send, nb::object recv, int peer)
      : channel_(channel), send_(std::move(send)), recv_(std::move(recv)), peer_(peer) {}

  /// Collective with each peer (rma: over comm): creates `peers.size()`
  /// channels at once, channel i to peers[i] with sends[i] and recvs[i].
  static std::vector<Channel> create(nb::handle comm_object, const std::vector<int>& peers,
                                     const std::vector<nb::object>& sends,
                                     const std::vector<nb::object>& recvs,
                                     const std::vector<int>& tags, int max_in_flight,
                                     const std::string& mode, const std::string& transport) {
    const MPI_Comm comm = comm_of(comm_object);
    if (sends.size() != peers.size() || recvs.size() != peers.size() ||
        (!tags.empty() && tags.size() != peers.size())) {
      throw core::InputError(fmt::format(
          "{} peers, {} send and {} receive arrays, {} tags: expected one of each per peer",
          peers.size(), sends.size(), recvs.size(), tags.size()));
    }
    std::vector<as_channel_config> configs(peers.size());
    for (std::size_t i = 0; i < peers.size(); ++i) {
      const Buffer send = in_place(sends[i], "send", peers[i]);
      const Buffer recv = in_place(recvs[i], "receive", peers[i]);
      if (send.nbytes() != recv.nbytes() || send.nbytes() == 0) {
        throw core::InputError(fmt::format(
            "channel to rank {}: a send array of {} bytes and a receive array of {}: expected "
            "arrays of the same size, not empty",
            peers[i], send.nbytes(), recv.nbytes()));
      }
      as_channel_config& c = configs[i];
      as_channel_config_init(&c);
      c.transport = parse_transport(transport);
      c.comm = comm;
      c.peer = peers[i];
      c.tag = tags.empty() ? 0 : tags[i];
      c.message_size = send.nbytes();
      c.sendbuf = const_cast<void*>(send.data());
      c.recvbuf = const_cast<void*>(recv.data());
      c.max_in_flight = max_in_flight;
      c.mode = parse_mode(mode);
    }
    std::vector<as_channel*> handles(peers.size(), nullptr);
    {
      nb::gil_scoped_release release;
      check(as_channels_create(static_cast<int>(handles.size()), handles.data(), configs.data()),
            "as_channels_create");
    }
    std::vector<Channel> out;
    out.reserve(handles.size());
    for (std::size_t i = 0; i < handles.size(); ++i)
      out.emplace_back(handles[i], sends[i], recvs[i], peers[i]);
    return out;
  }

  /// Collective with each peer: destroys the channels together.
  static void destroy(std::vector<Channel*> channels) {
    std::vector<as_channel*> handles;
    for (Channel* c : channels) handles.push_back(c->live());
    {
      nb::gil_scoped_release release;
      check(as_channels_destroy(static_cast<int>(handles.size()), handles.data()),
            "as_channels_destroy");
    }
    for (Channel* c : channels) c->forget();
  }

  /// Index of the first channel with news, or -1 after timeout_s seconds.
  static int wait_any(const std::vector<Channel*>& channels, double timeout_s) {
    std::vector<as_channel*> handles;
    for (Channel* c : channels) handles.push_back(c->live());
    int index = -1;
    nb::gil_scoped_release release;
    check(as_channels_wait_any(static_cast<int>(handles.size()), handles.data(), timeout_s, &index),
          "as_channels_wait_any");
    return index;
  }

  bool can_send() {
    int flag = 0;
    nb::gil_scoped_release release;
    check(as_channel_can_send(live(), &flag), "as_channel_can_send");
    return flag != 0;
  }
  void send() {
    nb::gil_scoped_release release;
    check(as_channel_send(live()), "as_channel_send");
  }
  bool try_send() {
    int sent = 0;
    nb::gil_scoped_release release;
    check(as_channel_try_send(live(), &sent), "as_channel_try_send");
    return sent != 0;
  }
  bool can_recv() {
    int flag = 0;
    nb::gil_scoped_release release;
    check(as_channel_can_recv(live(), &flag), "as_channel_can_recv");
    return flag != 0;
  }
  int recv() {
    int messages = 0;
    nb::gil_scoped_release release;
    check(as_channel_recv(live(), &messages), "as_channel_recv");
    return messages;
  }
  void progress() {
    nb::gil_scoped_release release;
    check(as_channel_progress(live()), "as_channel_progress");
  }
  int in_flight() {
    int count = 0;
    check(as_channel_in_flight(live(), &count), "as_channel_in_flight");
    return count;
  }
  nb::dict stats() {
    as_channel_stats s{};
    check(as_channel_get_stats(live(), &s), "as_channel_get_stats");
    nb::dict d;
    d["sent"] = s.sent;
    d["arrived"] = s.arrived;
    d["delivered"] = s.delivered;
    d["discarded"] = s.discarded;
    d["recv_calls"] = s.recv_calls;
    d["blocked_sends"] = s.blocked_sends;
    return d;
  }
  int peer() const { return peer_; }
  bool destroyed() const { return channel_ == nullptr; }
  nb::object send_buffer() const { return send_; }
  nb::object recv_buffer() const { return recv_; }

 private:
  as_channel* live() {
    if (channel_ == nullptr) {
      throw core::InputError(
          fmt::format("channel to rank {}: destroyed: expected a live channel", peer_));
    }
    return channel_;
  }
  void forget() {
    channel_ = nullptr;
    send_ = nb::none();
    recv_ = nb::none();
  }

  as_channel* channel_ = nullptr;
  nb::object send_;
  nb::object recv_;
  int peer_ = -1;
};

}  // namespace

void bind_channel(nb::module_& m) {
  nb::class_<Channel>(m, "Channel",
                      "One end of an asynchronous channel (include/asyncsolve/channel.h) whose "
                      "messages are a NumPy send array and land in a receive array of the same "
                      "size. Create and destroy with create() and destroy(), collective with "
                      "each peer; a channel not destroyed stays open (never destroyed by the "
                      "garbage collector).")
      .def_static("create", &Channel::create, nb::arg("comm").none(), nb::arg("peers"),
                  nb::arg("sends"), nb::arg("recvs"), nb::arg("tags") = std::vector<int>{},
                  nb::arg("max_in_flight") = 1, nb::arg("mode") = "async",
                  nb::arg("transport") = "mpi",
                  "Collective with each peer (rma: over comm): one channel per peer, created "
                  "together (as_channels_create).")
      .def_static("destroy", &Channel::destroy, nb::arg("channels"),
                  "Collective with each peer: completes what is in flight and destroys the "
                  "channels together (as_channels_destroy).")
      .def_static("wait_any", &Channel::wait_any, nb::arg("channels"), nb::arg("timeout_s"),
                  "Index of the first channel with news, or -1 after timeout_s seconds "
                  "(as_channels_wait_any).")
      .def("can_send", &Channel::can_send, "True if send() will not block.")
      .def("send", &Channel::send,
           "Sends the send array (blocks while the channel is full); the array may be "
           "changed when it returns.")
      .def("try_send", &Channel::try_send, "Sends if it can without blocking; True if it did.")
      .def("can_recv", &Channel::can_recv,
           "True if a message arrived since the last recv() (racy: always).")
      .def("recv", &Channel::recv,
           "Async: the newest message into the receive array, older ones discarded; racy: "
           "progresses. Returns the messages that arrived since the last call.")
      .def("progress", &Channel::progress, "Progresses the channel's transfers.")
      .def("in_flight", &Channel::in_flight, "Messages sent and not yet acknowledged.")
      .def("stats", &Channel::stats, "The channel's counters as a dict.")
      .def_prop_ro("peer", &Channel::peer)
      .def_prop_ro("destroyed", &Channel::destroyed)
      .def_prop_ro("send_array", &Channel::send_buffer)
      .def_prop_ro("recv_array", &Channel::recv_buffer);
}

}  // namespace asyncsolve::python
