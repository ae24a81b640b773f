// asyncsolve._core.Channel: the channel C API (channel.h) over NumPy
// buffers. A channel keeps its two arrays alive (it reads the send array in
// send() and writes the receive array in recv(), and in racy mode in any
// call that progresses it) until it is destroyed; nothing is copied between
// them and the channel's own transfers. Every call that progresses the
// channel releases the GIL.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "asyncsolve/channel.h"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/par/memory.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"
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

/// The bytes a create call's message slots take on this rank: the landing
/// areas (max_in_flight slots of the message size, rounded up to 8 bytes,
/// per channel; one in racy mode) and, over mpi, the senders' private
/// copies (max_in_flight slots per channel, racy or not).
double slot_bytes(const std::vector<as_channel_config>& configs, int transport) {
  double bytes = 0.0;
  for (const as_channel_config& c : configs) {
    if (c.peer == MPI_PROC_NULL) continue;
    const double size = static_cast<double>((c.message_size + 7) / 8 * 8);
    const double landing = c.mode == AS_MODE_RACY ? 1.0 : static_cast<double>(c.max_in_flight);
    const double sending =
        transport == AS_TRANSPORT_MPI ? static_cast<double>(c.max_in_flight) : 0.0;
    bytes += (landing + sending) * size;
  }
  return bytes;
}

/// The out-of-memory message of a create call: what its slots need
/// (slot_bytes), the usual cause being a large max_in_flight.
std::string out_of_memory(const std::vector<as_channel_config>& configs, int transport) {
  int depth = 0;
  for (const as_channel_config& c : configs)
    if (c.peer != MPI_PROC_NULL)
      depth = std::max(depth, c.mode == AS_MODE_RACY ? 1 : c.max_in_flight);
  return fmt::format(
      "as_channels_create: out of memory: this rank's channels need about {:.3g} GiB of message "
      "slots (max_in_flight up to {}): expected a smaller max_in_flight or message",
      slot_bytes(configs, transport) / (1024.0 * 1024.0 * 1024.0), depth);
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
  if (nb::hasattr(array, "dtype") && nb::cast<bool>(array.attr("dtype").attr("hasobject"))) {
    throw core::InputError(fmt::format(
        "channel to rank {}: the {} array holds Python objects (dtype {}): expected an array "
        "of numbers (a channel sends the array's bytes)",
        peer, what, nb::cast<std::string>(array.attr("dtype").attr("name"))));
  }
  if (nb::hasattr(array, "dtype") && !nb::object(array.attr("dtype").attr("fields")).is_none()) {
    // nanobind's ndarray takes no structured (record) dtype
    throw core::InputError(fmt::format(
        "channel to rank {}: the {} array has a structured dtype ({}): expected an array of one "
        "plain number type (a view of the same bytes, e.g. array.view(np.uint8), is one)",
        peer, what, nb::cast<std::string>(nb::repr(array.attr("dtype")))));
  }
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

const char* mode_name(int mode) { return mode == AS_MODE_RACY ? "racy" : "async"; }
const char* transport_name(int transport) { return transport == AS_TRANSPORT_RMA ? "rma" : "mpi"; }

/// What one rank's create call asks for, as every rank of comm sees it:
/// the transport, then per channel its peer, tag, message size, depth and
/// mode (Channel::create's collective check).
constexpr std::size_t end_fields = 5;
struct Ends {
  std::vector<long long> values;  ///< all ranks' descriptions, rank after rank
  std::vector<int> first;         ///< rank r's description starts at values[first[r]]
  std::vector<int> length;

  long long transport(int r) const { return values[static_cast<std::size_t>(first[r])]; }
  int channels(int r) const { return (length[r] - 1) / static_cast<int>(end_fields); }
  const long long* end(int r, int i) const {
    return &values[static_cast<std::size_t>(first[r]) + 1 +
                   end_fields * static_cast<std::size_t>(i)];
  }
};

/// This rank's description for unpaired(): the transport, then each
/// channel's peer, tag, message size, depth and mode.
std::vector<long long> describe_ends(int transport, const std::vector<as_channel_config>& configs) {
  std::vector<long long> out{transport};
  for (const as_channel_config& c : configs) {
    out.insert(out.end(),
               {c.peer, c.tag, static_cast<long long>(c.message_size), c.max_in_flight, c.mode});
  }
  return out;
}

/// Collective over comm: every rank's description (MPI_Allgather of the
/// lengths, MPI_Allgatherv of the values).
Ends gather_ends(const par::Comm& comm, const std::vector<long long>& mine) {
  Ends all;
  const int ranks = comm.size();
  all.length.assign(static_cast<std::size_t>(ranks), 0);
  all.first.assign(static_cast<std::size_t>(ranks), 0);
  const int count = static_cast<int>(mine.size());
  par::check_mpi(MPI_Allgather(&count, 1, MPI_INT, all.length.data(), 1, MPI_INT, comm.get()),
                 "MPI_Allgather");
  int total = 0;
  for (int r = 0; r < ranks; ++r) {
    all.first[static_cast<std::size_t>(r)] = total;
    total += all.length[static_cast<std::size_t>(r)];
  }
  all.values.assign(static_cast<std::size_t>(total), 0);
  par::check_mpi(MPI_Allgatherv(mine.data(), count, MPI_LONG_LONG, all.values.data(),
                                all.length.data(), all.first.data(), MPI_LONG_LONG, comm.get()),
                 "MPI_Allgatherv");
  return all;
}

/// The first thing in `all` that would leave a rank waiting in the create
/// (the same text on every rank), or "": a transport that differs between
/// ranks, a rank without an rma channel (the rma window is allocated over
/// comm), a channel whose other end is not listed, or two ends that differ
/// in message size, depth or mode.
std::string unpaired(const Ends& all) {
  const int ranks = static_cast<int>(all.length.size());
  for (int r = 1; r < ranks; ++r) {
    if (all.transport(r) != all.transport(0)) {
      return fmt::format(
          "transport differs between the ranks (rank 0: {}, rank {}: {}): expected the same on "
          "every rank of comm",
          transport_name(static_cast<int>(all.transport(0))), r,
          transport_name(static_cast<int>(all.transport(r))));
    }
  }
  for (int r = 0; r < ranks; ++r) {
    if (all.transport(0) == AS_TRANSPORT_RMA && all.channels(r) == 0) {
      return fmt::format(
          "transport rma: rank {} has no channel: expected at least one on every rank of comm "
          "(the rma channels of one create call share a window allocated over comm; create "
          "them on a communicator of the ranks that have channels)",
          r);
    }
    for (int i = 0; i < all.channels(r); ++i) {
      const long long* e = all.end(r, i);
      const int peer = static_cast<int>(e[0]);
      const long long* other = nullptr;
      for (int j = 0; j < all.channels(peer) && other == nullptr; ++j) {
        const long long* f = all.end(peer, j);
        if (f[0] == r && f[1] == e[1]) other = f;
      }
      if (other == nullptr) {
        return fmt::format(
            "rank {} lists a channel to rank {} (tag {}) and rank {} lists none to rank {} with "
            "that tag: expected both ends of every channel in the create call",
            r, peer, e[1], peer, r);
      }
      if (!std::equal(e + 2, e + end_fields, other + 2)) {
        return fmt::format(
            "the channel between ranks {} and {} (tag {}): {} bytes, max_in_flight {}, {} on "
            "rank {}; {} bytes, max_in_flight {}, {} on rank {}: expected the same message "
            "size, max_in_flight and mode at both ends",
            r, peer, e[1], e[2], e[3], mode_name(static_cast<int>(e[4])), r, other[2], other[3],
            mode_name(static_cast<int>(other[4])), peer);
      }
    }
  }
  return {};
}

/// The checks of one channel's arguments that its end can make alone
/// (as_channels_create would refuse them with a bare AS_ERR_ARG).
void check_end(const as_channel_config& c, int rank, int ranks) {
  if (c.peer < 0 || c.peer >= ranks || c.peer == rank) {
    throw core::InputError(
        ranks == 1
            ? fmt::format("peer {}: expected another rank of comm, and comm has one rank", c.peer)
            : fmt::format("peer {}: expected another rank of comm, 0 to {}", c.peer, ranks - 1));
  }
  if (c.message_size > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw core::InputError(fmt::format(
        "channel to rank {}: a message of {} bytes: expected at most {} (a message is one MPI "
        "transfer, whose count is an int)",
        c.peer, c.message_size, std::numeric_limits<int>::max()));
  }
  if (c.max_in_flight < 1) {
    throw core::InputError(fmt::format("channel to rank {}: max_in_flight {}: expected at least 1",
                                       c.peer, c.max_in_flight));
  }
  if (c.mode == AS_MODE_RACY &&
      (c.message_size % 8 != 0 || reinterpret_cast<std::uintptr_t>(c.recvbuf) % 8 != 0)) {
    throw core::InputError(fmt::format(
        "channel to rank {}: racy mode with a message of {} bytes{}: expected a multiple of 8 "
        "bytes in an 8-byte aligned receive array (racy arrivals land as 8-byte atomic words)",
        c.peer, c.message_size,
        reinterpret_cast<std::uintptr_t>(c.recvbuf) % 8 != 0 ? " at an unaligned address" : ""));
  }
}

/// One end of a channel and the arrays it uses.
class Channel {
 public:
  /// The channels of one create call share `call` (its transport and size).
  struct Call {
    int transport = AS_TRANSPORT_MPI;
    std::size_t channels = 0;
  };

  Channel(as_channel* channel, nb::object send, nb::object recv, int peer,
          std::shared_ptr<const Call> call)
      : channel_(channel),
        send_(std::move(send)),
        recv_(std::move(recv)),
        peer_(peer),
        call_(std::move(call)) {}

  /// Collective over comm (both transports): creates `peers.size()` channels
  /// at once, channel i to peers[i] with sends[i] and recvs[i]. Every rank's
  /// arguments are checked, then every rank's list of ends against the
  /// others' (an allgather), before anything is created: an error on any
  /// rank, or a channel whose two ends do not match, is an InputError on
  /// every rank, and no rank waits for a peer that is not coming.
  static std::vector<Channel> create(nb::handle comm_object, nb::handle peers, nb::handle sends,
                                     nb::handle recvs, nb::handle tags, nb::handle max_in_flight,
                                     nb::handle mode, nb::handle transport) {
    const MPI_Comm comm = comm_of(comm_object);
    const par::Comm world = par::Comm::view(comm);
    std::string error;
    Arguments args;
    try {
      args = arguments(world, peers, sends, recvs, tags, max_in_flight, mode, transport);
    } catch (const std::exception& e) {  // InputError, or a Python error while converting
      error = rank_error(world.rank(), world.size(), e.what());
    }
    std::vector<as_channel*> handles(args.configs.size(), nullptr);
    {
      nb::gil_scoped_release release;
      sparse::raise_together(world, error);
      const std::vector<long long> mine = describe_ends(args.transport, args.configs);
      if (const std::string why = unpaired(gather_ends(world, mine)); !why.empty()) {
        throw core::InputError(why);
      }
      // Slots that cannot be reserved are refused at once, on every rank
      // alike, rather than after the pages before them were touched.
      int fits = par::can_reserve(slot_bytes(args.configs, args.transport)) ? 1 : 0;
      par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, world.get()),
                     "MPI_Allreduce");
      if (fits == 0) throw core::RuntimeFailure(out_of_memory(args.configs, args.transport));
      const int status =
          as_channels_create(static_cast<int>(handles.size()), handles.data(), args.configs.data());
      if (status == AS_ERR_NOMEM)
        throw core::RuntimeFailure(out_of_memory(args.configs, args.transport));
      check(status, "as_channels_create");
    }
    std::vector<Channel> out;
    out.reserve(handles.size());
    const auto call = std::make_shared<const Call>(Call{args.transport, handles.size()});
    for (std::size_t i = 0; i < handles.size(); ++i) {
      out.emplace_back(handles[i], args.sends[i], args.recvs[i], args.configs[i].peer, call);
    }
    return out;
  }

  /// Collective with each peer: destroys the channels together.
  static void destroy(const nb::object& list) {
    const std::vector<Channel*> channels = channels_in(list);
    std::vector<as_channel*> handles = handles_of(channels);
    for (std::size_t i = 0; i < channels.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (channels[j] == channels[i]) {
          throw core::InputError(fmt::format(
              "channels[{}]: the same channel as channels[{}]: expected each channel once", i, j));
        }
      }
    }
    // rma: exactly the channels of one create call (they share one window).
    for (std::size_t i = 0; i < channels.size(); ++i) {
      const Call& call = *channels[i]->call_;
      if (call.transport != AS_TRANSPORT_RMA) continue;
      if (channels[i]->call_ != channels[0]->call_ || call.channels != channels.size()) {
        throw core::InputError(fmt::format(
            "channels[{}]: transport rma: destroy takes the channels of one create call, all of "
            "them together ({} from that call), got {} channel{}{}",
            i, call.channels, channels.size(), channels.size() == 1 ? "" : "s",
            channels[i]->call_ != channels[0]->call_ ? " from different calls" : ""));
      }
    }
    {
      nb::gil_scoped_release release;
      check(as_channels_destroy(static_cast<int>(handles.size()), handles.data()),
            "as_channels_destroy");
    }
    for (Channel* c : channels) c->forget();
  }

  /// Index of the first channel with news, or -1 after timeout_s seconds.
  static int wait_any(const nb::object& list, double timeout_s) {
    const std::vector<Channel*> channels = channels_in(list);
    std::vector<as_channel*> handles = handles_of(channels);
    if (!(timeout_s >= 0.0) || !std::isfinite(timeout_s)) {
      throw core::InputError(fmt::format(
          "timeout_s {}: expected a finite number of seconds >= 0 (0: one poll)", timeout_s));
    }
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
  /// The channels of `list`, a list (or other sequence) of Channel or None
  /// (handles_of refuses None); anything else is an InputError naming what
  /// it is, as the other arguments' are, not nanobind's TypeError.
  static std::vector<Channel*> channels_in(const nb::object& list) {
    std::vector<Channel*> out;
    if (!nb::isinstance<nb::str>(list)) {  // a str is a sequence, of str
      if (nb::try_cast(list, out)) return out;
      if (nb::isinstance<nb::sequence>(list)) {
        std::size_t i = 0;
        for (const nb::handle item : list) {
          Channel* c = nullptr;
          if (!item.is_none() && !nb::try_cast(item, c)) {
            throw core::InputError(fmt::format("channels[{}]: a {}: expected a Channel", i,
                                               nb::type_name(item.type()).c_str()));
          }
          ++i;
        }
      }
    }
    throw core::InputError(fmt::format("channels: a {}: expected a list of Channel",
                                       nb::type_name(list.type()).c_str()));
  }

  /// The live handles of a list of channels (None in the list: refused).
  static std::vector<as_channel*> handles_of(const std::vector<Channel*>& channels) {
    std::vector<as_channel*> handles;
    handles.reserve(channels.size());
    for (std::size_t i = 0; i < channels.size(); ++i) {
      if (channels[i] == nullptr)
        throw core::InputError(fmt::format("channels[{}]: None: expected a Channel", i));
      handles.push_back(channels[i]->live());
    }
    return handles;
  }
  as_channel* live() {
    if (channel_ == nullptr) {
      throw core::InputError(
          fmt::format("channel to rank {}: destroyed: expected a live channel", peer_));
    }
    return channel_;
  }
  /// One rank's arguments to create(), converted.
  struct Arguments {
    int transport = AS_TRANSPORT_MPI;
    std::vector<as_channel_config> configs;
    std::vector<nb::object> sends;
    std::vector<nb::object> recvs;
  };

  /// This rank's arguments, converted and checked as far as this rank can
  /// alone.
  static Arguments arguments(const par::Comm& world, nb::handle peer_list, nb::handle send_list,
                             nb::handle recv_list, nb::handle tag_list, nb::handle depth,
                             nb::handle mode_name, nb::handle transport_name) {
    constexpr long long int_max = std::numeric_limits<int>::max();
    constexpr long long int_min = std::numeric_limits<int>::min();
    Arguments args;
    args.transport = parse_transport(text_of(transport_name, "transport"));
    const int mode = parse_mode(text_of(mode_name, "mode"));
    const int max_in_flight =
        static_cast<int>(integer_of(depth, "max_in_flight", 1, int_max, "1 to 2147483647"));
    const std::vector<nb::object> peers = items_of(peer_list, "peers");
    args.sends = items_of(send_list, "sends");
    args.recvs = items_of(recv_list, "recvs");
    const std::vector<nb::object> tags =
        tag_list.is_none() ? std::vector<nb::object>{} : items_of(tag_list, "tags");
    if (args.sends.size() != peers.size() || args.recvs.size() != peers.size() ||
        (!tags.empty() && tags.size() != peers.size())) {
      throw core::InputError(fmt::format(
          "{} peers, {} send and {} receive arrays, {} tags: expected one of each per peer",
          peers.size(), args.sends.size(), args.recvs.size(), tags.size()));
    }
    void* attr = nullptr;
    int has = 0;
    MPI_Comm_get_attr(world.get(), MPI_TAG_UB, &attr, &has);
    const long long tag_ub = has != 0 ? *static_cast<int*>(attr) : 32767;
    args.configs.resize(peers.size());
    for (std::size_t i = 0; i < peers.size(); ++i) {
      const std::string which = fmt::format("peers[{}]", i);
      const int peer =
          static_cast<int>(integer_of(peers[i], which, int_min, int_max, "a rank of comm"));
      const long long largest_tag = (tag_ub - 1) / 2;  // data on 2 tag, control on 2 tag + 1
      const int tag =
          tags.empty()
              ? 0
              : static_cast<int>(integer_of(tags[i], fmt::format("tags[{}]", i), 0, largest_tag,
                                            fmt::format("a tag from 0 to {}", largest_tag)));
      const Buffer send = in_place(args.sends[i], "send", peer);
      const Buffer recv = in_place(args.recvs[i], "receive", peer);
      if (send.nbytes() != recv.nbytes() || send.nbytes() == 0) {
        throw core::InputError(fmt::format(
            "channel to rank {}: a send array of {} bytes and a receive array of {}: expected "
            "arrays of the same size, not empty",
            peer, send.nbytes(), recv.nbytes()));
      }
      as_channel_config& c = args.configs[i];
      as_channel_config_init(&c);
      c.transport = args.transport;
      c.comm = world.get();
      c.peer = peer;
      c.tag = tag;
      c.message_size = send.nbytes();
      c.sendbuf = const_cast<void*>(send.data());
      c.recvbuf = const_cast<void*>(recv.data());
      c.max_in_flight = max_in_flight;
      c.mode = mode;
      check_end(c, world.rank(), world.size());  // (the tag's range: read above)
      for (std::size_t j = 0; j < i; ++j) {
        if (args.configs[j].peer == c.peer && args.configs[j].tag == c.tag) {
          throw core::InputError(fmt::format(
              "two channels to rank {} with tag {}: expected a different tag for each channel "
              "to the same peer",
              c.peer, c.tag));
        }
      }
    }
    return args;
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
  std::shared_ptr<const Call> call_;
};

}  // namespace

void bind_channel(nb::module_& m) {
  nb::class_<Channel>(m, "Channel",
                      "One end of an asynchronous channel (include/asyncsolve/channel.h) whose "
                      "messages are a NumPy send array and land in a receive array of the same "
                      "size. Create with create(), collective over comm, and destroy with "
                      "destroy(), collective with each peer (over comm for rma); a channel not "
                      "destroyed stays open (never destroyed by the garbage collector).")
      .def_static("create", &Channel::create, nb::arg("comm").none(), nb::arg("peers").none(),
                  nb::arg("sends").none(), nb::arg("recvs").none(),
                  nb::arg("tags").none() = nb::none(), nb::arg("max_in_flight").none() = 1,
                  nb::arg("mode").none() = "async", nb::arg("transport").none() = "mpi",
                  "Collective over comm: one channel per peer, created together "
                  "(as_channels_create) once every rank's arguments are checked and each "
                  "channel's two ends found to match; any error is raised on every rank.")
      .def_static("destroy", &Channel::destroy, nb::arg("channels").none(),
                  "Collective with each peer: completes what is in flight and destroys the "
                  "channels together (as_channels_destroy).")
      .def_static("wait_any", &Channel::wait_any, nb::arg("channels").none(), nb::arg("timeout_s"),
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
