#pragma once
// elementwise under MPI, header-only and outside the library (the library never
// depends on MPI). Each rank computes its part of a global array with its own context;
// elementwise work needs no communication, so the helper only answers two questions:
//   - which GPU this rank takes: the node-local rank (from MPI_COMM_TYPE_SHARED, what
//     the launcher's OMPI_COMM_WORLD_LOCAL_RANK says too) picks entry local_rank of
//     EW_DEVICE's list when EW_DEVICE is set (EW_DEVICE=2,3: the node's first rank takes
//     GPU 2, its second GPU 3), else GPU local_rank. highway gets the node's hardware threads
//     divided among its ranks.
//   - which elements this rank holds: ew::shard_range over the ranks in rank order
//     (docs/multigpu.md gives the rule: groups of `granule` elements, the first
//     groups % ranks ranks one group more).
//
//   MPI_Init(&argc, &argv);
//   const ew_mpi::Placement where = ew_mpi::placement(MPI_COMM_WORLD);
//   ew::Context ctx = ew_mpi::make_context(where);
//   const ew::ShardRange mine = ew_mpi::rank_range(global_n, where);
//   ew::Buffer<float> a(ctx, mine.size()), ...;   // elements mine.begin .. mine.end - 1
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <ew/ew.hpp>

namespace ew_mpi {

struct Placement {
  int rank = 0, ranks = 1;              // in the communicator
  int local_rank = 0, local_ranks = 1;  // among the communicator's ranks on this node
};

inline Placement placement(MPI_Comm comm = MPI_COMM_WORLD) {
  Placement p;
  MPI_Comm_rank(comm, &p.rank);
  MPI_Comm_size(comm, &p.ranks);
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, p.rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &p.local_rank);
  MPI_Comm_size(node, &p.local_ranks);
  MPI_Comm_free(&node);
  return p;
}

// The GPU of this rank by the rule above. EW_DEVICE must be an index or a list of
// them (as for the library) with an entry for every rank of the node.
inline int node_local_device(const Placement& p) {
  const char* env = std::getenv("EW_DEVICE");
  if (!env || !*env) return p.local_rank;
  std::vector<int> devices;
  std::string text(env);
  for (std::size_t start = 0;;) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos)
      throw ew::Error(ew::Errc::invalid_argument, "EW_DEVICE='" + text +
                                                      "' is not a device index or a comma-separated list of them");
    devices.push_back(std::stoi(item));
    if (comma == text.size()) break;
    start = comma + 1;
  }
  if (p.local_rank >= static_cast<int>(devices.size()))
    throw ew::Error(ew::Errc::invalid_argument,
                    "EW_DEVICE='" + text + "' lists " + std::to_string(devices.size()) + " device(s), but this node runs " +
                        std::to_string(p.local_ranks) + " ranks (local rank " + std::to_string(p.local_rank) + ")");
  return devices[static_cast<std::size_t>(p.local_rank)];
}

// A context for this rank: on cuda, its node-local GPU; on the CPU backends, its share
// of the node's hardware threads. `backend` as for ew::Context (automatic: EW_BACKEND,
// else the best usable backend).
inline ew::Context make_context(const Placement& p, ew::Backend backend = ew::Backend::automatic) {
  const ew::Backend chosen = ew::resolve_backend(backend);
  ew::ContextOptions options;
  if (chosen == ew::Backend::cuda) {
    options.device = node_local_device(p);
  } else if (chosen == ew::Backend::highway) {  // scalar runs on one thread, Kokkos fixes its own
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    options.threads = static_cast<int>(std::max(1u, threads / static_cast<unsigned>(std::max(1, p.local_ranks))));
  }
  return ew::Context(chosen, options);
}

// This rank's part of a global array of n elements (ew::shard_range over the ranks).
inline ew::ShardRange rank_range(std::size_t n, const Placement& p, std::size_t granule = 1) {
  return ew::shard_range(n, static_cast<std::size_t>(p.ranks), static_cast<std::size_t>(p.rank), granule);
}

}  // namespace ew_mpi
