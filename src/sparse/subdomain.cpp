// Overlapping subdomains: growth by layers of the matrix graph, the overlap
// rows fetched from their owners, the subdomain matrix, and the plans.
//
// Growth is a breadth-first search over the rows' columns. Layer l's rows
// are the columns the rows of layer l - 1 reference outside the subdomain
// so far (layer 0: the owned rows); earlier layers' columns are already
// inside, so only the newest layer needs looking at. Each layer is one
// fetch: a sparse all-to-all (detail::alltoallv, messages only between
// neighbours) of the requested global rows, and three of the replies (row
// lengths, columns, values). An owner remembers who asked for which row:
// that is the send side of the overlap plan, no further message needed.
#include "asyncsolve/sparse/subdomain.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "alltoallv_impl.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"

namespace asyncsolve::sparse {
namespace {

/// Rows with global columns (the owned rows, and those fetched).
struct GlobalRows {
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
  void add(std::span<const std::int64_t> c, std::span<const double> v) {
    col.insert(col.end(), c.begin(), c.end());
    val.insert(val.end(), v.begin(), v.end());
    row_ptr.push_back(static_cast<std::int64_t>(col.size()));
  }
  int rows() const noexcept { return static_cast<int>(row_ptr.size()) - 1; }
};

/// The matrix's own rows with global column indices.
GlobalRows owned_rows(const DistMatrix& m) {
  GlobalRows out;
  const int n = m.local_rows();
  std::vector<std::int64_t> cols;
  std::vector<double> vals;
  for (int i = 0; i < n; ++i) {
    cols.clear();
    vals.clear();
    for (std::int64_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) {
      const std::int32_t c = m.col()[k];
      cols.push_back(c < n ? m.first_row() + c : m.ghost_globals()[c - n]);
      vals.push_back(m.val()[k]);
    }
    out.add(cols, vals);
  }
  return out;
}

/// Collective: the rows `wanted` (ascending, none owned here) from their
/// owners, in the order of `wanted`. Records in requested_by[r] the local
/// indices of the owned rows rank r asked for.
GlobalRows fetch_rows(const DistMatrix& m, const GlobalRows& mine,
                      const std::vector<std::int64_t>& wanted,
                      std::vector<std::vector<int>>& requested_by) {
  const par::Comm& comm = m.comm();
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<std::vector<std::int64_t>> ask(ranks);
  for (const std::int64_t g : wanted) ask[detail::owner_of(m.row_offsets(), g)].push_back(g);
  std::vector<int> asked_counts;
  const std::vector<std::int64_t> asked = detail::alltoallv(comm, ask, asked_counts);
  // The replies: each requested row's length, then its columns and values.
  std::vector<std::vector<std::int64_t>> lengths(ranks);
  std::vector<std::vector<std::int64_t>> cols(ranks);
  std::vector<std::vector<double>> vals(ranks);
  std::size_t at = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    for (int k = 0; k < asked_counts[r]; ++k, ++at) {
      const std::int64_t i = asked[at] - m.first_row();
      if (i < 0 || i >= m.local_rows())
        throw std::logic_error("grow_subdomain: a rank asked for a row this rank does not own");
      requested_by[r].push_back(static_cast<int>(i));
      const std::int64_t b = mine.row_ptr[i];
      const std::int64_t e = mine.row_ptr[i + 1];
      lengths[r].push_back(e - b);
      cols[r].insert(cols[r].end(), mine.col.begin() + b, mine.col.begin() + e);
      vals[r].insert(vals[r].end(), mine.val.begin() + b, mine.val.begin() + e);
    }
  }
  std::vector<int> counts;
  const std::vector<std::int64_t> got_lengths = detail::alltoallv(comm, lengths, counts);
  const std::vector<std::int64_t> got_cols = detail::alltoallv(comm, cols, counts);
  const std::vector<double> got_vals = detail::alltoallv(comm, vals, counts);
  // Replies come by owner rank, each in the order asked: `wanted`'s order,
  // since wanted is ascending and owners hold ascending ranges.
  GlobalRows out;
  std::int64_t offset = 0;
  for (const std::int64_t len : got_lengths) {
    out.add({got_cols.data() + offset, static_cast<std::size_t>(len)},
            {got_vals.data() + offset, static_cast<std::size_t>(len)});
    offset += len;
  }
  return out;
}

/// `rows` (global columns) in the local numbering `index` gives (-1:
/// dropped), each row sorted by local column.
LocalCsr renumber(const GlobalRows& rows, const auto& index) {
  LocalCsr out;
  std::vector<std::pair<std::int32_t, double>> row;
  for (int i = 0; i < rows.rows(); ++i) {
    row.clear();
    for (std::int64_t k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k) {
      const std::int64_t c = index(rows.col[k]);
      if (c >= 0) row.emplace_back(static_cast<std::int32_t>(c), rows.val[k]);
    }
    std::sort(row.begin(), row.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [c, v] : row) {
      out.col.push_back(c);
      out.val.push_back(v);
    }
    out.row_ptr.push_back(static_cast<std::int64_t>(out.col.size()));
  }
  return out;
}

/// Collective: the metrics of every rank's subdomain.
SubdomainMetrics metrics_of(const par::Comm& comm, const Subdomain& s) {
  SubdomainMetrics m;
  m.overlap = s.overlap;
  std::int64_t sums[4] = {s.overlap_rows(), static_cast<std::int64_t>(s.overlap_plan.ghosts),
                          static_cast<std::int64_t>(s.halo_plan.ghosts),
                          static_cast<std::int64_t>(s.halo_plan.recvs.size())};
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_INT64_T, MPI_SUM, comm.get()),
                 "MPI_Allreduce");
  std::int64_t maxima[5] = {s.overlap_rows(), s.rows_count(), s.matrix.nnz(),
                            static_cast<std::int64_t>(s.halo_plan.ghosts),
                            static_cast<std::int64_t>(s.halo_plan.neighbours().size())};
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, maxima, 5, MPI_INT64_T, MPI_MAX, comm.get()),
                 "MPI_Allreduce");
  m.overlap_rows = sums[0];
  m.overlap_volume = sums[1];
  m.halo_volume = sums[2];
  m.halo_messages = sums[3];
  m.max_overlap_rows = maxima[0];
  m.max_rows = maxima[1];
  m.max_nnz = maxima[2];
  m.max_halo_volume = maxima[3];
  m.max_neighbours = static_cast<int>(maxima[4]);
  return m;
}

}  // namespace

NeighbourPlan Subdomain::reverse_plan() const {
  NeighbourPlan out;
  for (const RecvLink& r : overlap_plan.recvs) {
    SendLink link{r.rank, {}};
    for (int k = 0; k < r.count; ++k) link.indices.push_back(owned + r.offset + k);
    out.sends.push_back(std::move(link));
  }
  int offset = 0;
  for (const SendLink& s : overlap_plan.sends) {
    const int count = static_cast<int>(s.indices.size());
    out.recvs.push_back({s.rank, offset, count});
    offset += count;
  }
  out.ghosts = offset;
  return out;
}

Subdomain grow_subdomain(const DistMatrix& m, int overlap) {
  if (overlap < 0 || overlap > kMaxOverlap) {
    throw core::InputError(
        fmt::format("--overlap {}: expected an integer from 0 to {}", overlap, kMaxOverlap));
  }
  const par::Comm& comm = m.comm();
  const int n = m.local_rows();
  const std::int64_t first = m.first_row();
  const auto is_owned = [&](std::int64_t g) { return g >= first && g < first + n; };
  const GlobalRows mine = owned_rows(m);

  // Breadth-first growth; `found` maps an overlap row's global index to its
  // position in `fetched` (the order rows arrived in).
  std::unordered_map<std::int64_t, int> found;
  GlobalRows fetched;
  std::vector<int> layer_of;
  std::vector<std::vector<int>> requested_by(static_cast<std::size_t>(comm.size()));
  std::vector<std::int64_t> frontier = m.ghost_globals();
  for (int l = 1; l <= overlap; ++l) {
    const GlobalRows layer = fetch_rows(m, mine, frontier, requested_by);
    for (int k = 0; k < layer.rows(); ++k) {
      found.emplace(frontier[k], fetched.rows());
      fetched.add({layer.col.data() + layer.row_ptr[k],
                   static_cast<std::size_t>(layer.row_ptr[k + 1] - layer.row_ptr[k])},
                  {layer.val.data() + layer.row_ptr[k],
                   static_cast<std::size_t>(layer.row_ptr[k + 1] - layer.row_ptr[k])});
      layer_of.push_back(l);
    }
    frontier.clear();
    for (const std::int64_t c : layer.col)
      if (!is_owned(c) && !found.contains(c)) frontier.push_back(c);
    std::sort(frontier.begin(), frontier.end());
    frontier.erase(std::unique(frontier.begin(), frontier.end()), frontier.end());
  }

  Subdomain s;
  s.owned = n;
  s.overlap = overlap;
  std::vector<std::int64_t> overlap_globals;
  overlap_globals.reserve(found.size());
  for (const auto& entry : found) overlap_globals.push_back(entry.first);
  std::sort(overlap_globals.begin(), overlap_globals.end());
  s.globals.resize(static_cast<std::size_t>(n));
  std::iota(s.globals.begin(), s.globals.end(), first);
  s.globals.insert(s.globals.end(), overlap_globals.begin(), overlap_globals.end());

  // The subdomain's rows in subdomain order, global columns.
  GlobalRows rows = mine;
  for (const std::int64_t g : overlap_globals) {
    const int k = found.at(g);
    s.layer.push_back(layer_of[k]);
    const std::int64_t b = fetched.row_ptr[k];
    const auto len = static_cast<std::size_t>(fetched.row_ptr[k + 1] - b);
    rows.add({fetched.col.data() + b, len}, {fetched.val.data() + b, len});
  }

  // The halo: every non-owned column held or referenced, ascending.
  s.halo_globals = overlap_globals;
  for (const std::int64_t c : rows.col)
    if (!is_owned(c)) s.halo_globals.push_back(c);
  std::sort(s.halo_globals.begin(), s.halo_globals.end());
  s.halo_globals.erase(std::unique(s.halo_globals.begin(), s.halo_globals.end()),
                       s.halo_globals.end());
  const auto halo_index = [&](std::int64_t g) {
    return static_cast<int>(std::lower_bound(s.halo_globals.begin(), s.halo_globals.end(), g) -
                            s.halo_globals.begin());
  };
  for (const std::int64_t g : overlap_globals) s.overlap_in_halo.push_back(halo_index(g));

  s.matrix = renumber(rows, [&](std::int64_t g) -> std::int64_t {
    if (is_owned(g)) return g - first;
    const auto it = std::lower_bound(overlap_globals.begin(), overlap_globals.end(), g);
    if (it == overlap_globals.end() || *it != g) return -1;
    return n + (it - overlap_globals.begin());
  });
  s.rows = renumber(rows, [&](std::int64_t g) -> std::int64_t {
    return is_owned(g) ? g - first : n + halo_index(g);
  });

  // Plans: the overlap's from the requests already made, the halo's by asking.
  s.overlap_plan.ghosts = static_cast<int>(overlap_globals.size());
  s.overlap_plan.recvs = detail::recv_links(m.row_offsets(), overlap_globals);
  for (std::size_t r = 0; r < requested_by.size(); ++r) {
    std::vector<int>& asked = requested_by[r];
    if (asked.empty()) continue;
    std::sort(asked.begin(), asked.end());
    s.overlap_plan.sends.push_back({static_cast<int>(r), std::move(asked)});
  }
  s.halo_plan = plan_for_ghosts(comm, m.row_offsets(), s.halo_globals);
  s.metrics = metrics_of(comm, s);
  return s;
}

}  // namespace asyncsolve::sparse
