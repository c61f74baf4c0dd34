// A global triad c = a + s*b over ranks, each rank on its own part (contrib/mpi/ew_mpi.hpp),
// its time, and two checksums of c that do not depend on the number of ranks:
//   - bits: the sum mod 2^64 of a 64-bit hash of (global index, bit pattern of c[i]),
//     exact integer arithmetic, so any grouping gives the same value;
//   - sum: c cut into global blocks of --block elements; each block summed by ew::sum (the
//     library's fixed tree, the same bits on every backend), the block sums added in
//     double in global block order on rank 0. Ranks hold whole blocks (rank_range with
//     granule = block), so every block sum is the same whatever the rank count.
// --verify gathers c on rank 0 and compares it bit for bit with the triad of the whole
// array computed by one process (scalar backend).
//
//   mpirun -np 2 mpi_triad [--n N] [--backend NAME] [--reps R] [--block B] [--verify]
#include <mpi.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "ew_mpi.hpp"

namespace {

constexpr float kScale = 0.75f;
constexpr std::size_t kChunk = std::size_t(1) << 22;  // host staging of the set-up and the checksum

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Input `which` at global index i: a multiple of 2^-23 in [-1, 1), a function of i alone,
// so each rank makes its own part without communication.
float input(int which, std::size_t i) {
  const std::uint64_t h = mix(2 * static_cast<std::uint64_t>(i) + static_cast<std::uint64_t>(which));
  return static_cast<float>(static_cast<std::int64_t>(h >> 40)) * 0x1p-23f - 1.0f;
}

std::uint64_t bits_term(std::size_t i, float c) {
  std::uint32_t b;
  std::memcpy(&b, &c, sizeof b);
  return mix((static_cast<std::uint64_t>(i) << 32) ^ b ^ 0x9e3779b97f4a7c15ull);
}

struct Options {
  std::size_t n = std::size_t(1) << 26;
  std::size_t block = std::size_t(1) << 20;
  int reps = 10;
  std::string backend = "auto";
  bool verify = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw ew::Error(ew::Errc::invalid_argument, arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--n") o.n = std::stoull(value());
    else if (arg == "--block") o.block = std::stoull(value());
    else if (arg == "--reps") o.reps = std::stoi(value());
    else if (arg == "--backend") o.backend = value();
    else if (arg == "--verify") o.verify = true;
    else throw ew::Error(ew::Errc::invalid_argument, "unknown argument '" + arg +
                                                         "' (--n N --block B --reps R --backend NAME --verify)");
  }
  if (o.block == 0 || o.reps < 1) throw ew::Error(ew::Errc::invalid_argument, "--block and --reps must be >= 1");
  return o;
}

// dst[0, count) = input `which` at global indices first.., through a host chunk.
void fill(ew::Context& ctx, ew::Span<float> dst, std::size_t first, int which) {
  std::vector<float> host(std::min(kChunk, dst.size));
  for (std::size_t off = 0; off < dst.size; off += host.size()) {
    const std::size_t len = std::min(host.size(), dst.size - off);
    for (std::size_t i = 0; i < len; ++i) host[i] = input(which, first + off + i);
    ew::copy<float>(ctx, ew::Span<const float>(host.data(), len), dst.subspan(off, len));
  }
  ctx.synchronize();
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const ew_mpi::Placement where = ew_mpi::placement(MPI_COMM_WORLD);
  ew::Context ctx = ew_mpi::make_context(where, ew::parse_backend(o.backend));
  const ew::ShardRange mine = ew_mpi::rank_range(o.n, where, o.block);
  const std::size_t len = mine.size();

  ew::Buffer<float> a(ctx, len), b(ctx, len), c(ctx, len);
  fill(ctx, a.span(), mine.begin, 0);
  fill(ctx, b.span(), mine.begin, 1);
  {  // poison c: every element must be written by the triad
    const std::vector<float> nan(std::min(kChunk, std::max<std::size_t>(len, 1)), std::numeric_limits<float>::quiet_NaN());
    for (std::size_t off = 0; off < len; off += nan.size()) {
      const std::size_t m = std::min(nan.size(), len - off);
      ew::copy<float>(ctx, ew::Span<const float>(nan.data(), m), c.span().subspan(off, m));
    }
    ctx.synchronize();
  }

  // Timing: each repetition starts together and lasts until the slowest rank is done.
  std::vector<double> times;
  for (int r = -1; r < o.reps; ++r) {  // r = -1: warm-up
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    ew::triad<float>(ctx, a.span(), kScale, b.span(), c.span());
    ctx.synchronize();
    double dt = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r >= 0) times.push_back(slowest);
  }
  std::sort(times.begin(), times.end());

  // Checksums.
  std::uint64_t bits = 0;
  {
    std::vector<float> host(std::min(kChunk, std::max<std::size_t>(len, 1)));
    for (std::size_t off = 0; off < len; off += host.size()) {
      const std::size_t m = std::min(host.size(), len - off);
      ew::copy<float>(ctx, c.span().subspan(off, m), ew::Span<float>(host.data(), m));
      ctx.synchronize();
      for (std::size_t i = 0; i < m; ++i) bits += bits_term(mine.begin + off + i, host[i]);
    }
  }
  std::uint64_t all_bits = 0;
  MPI_Reduce(&bits, &all_bits, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);

  std::vector<double> block_sums;
  for (std::size_t off = 0; off < len; off += o.block)
    block_sums.push_back(ew::sum<float>(ctx, c.span().subspan(off, std::min(o.block, len - off))));
  const int my_blocks = static_cast<int>(block_sums.size());
  std::vector<int> counts(static_cast<std::size_t>(where.ranks)), displs(counts.size());
  MPI_Gather(&my_blocks, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (std::size_t r = 1; r < counts.size(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<double> all_sums(where.rank == 0 ? static_cast<std::size_t>(displs.back() + counts.back()) : 0);
  MPI_Gatherv(block_sums.data(), my_blocks, MPI_DOUBLE, all_sums.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
              MPI_COMM_WORLD);
  double total = 0;
  for (double s : all_sums) total += s;  // global block order: ranks hold consecutive blocks

  int status = 0;
  if (o.verify) {
    if (o.n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw ew::Error(ew::Errc::invalid_argument, "--verify gathers c on rank 0: at most 2^31 - 1 elements");
    std::vector<float> local(len);
    c.download(local.data(), len);
    const int my_len = static_cast<int>(len);
    MPI_Gather(&my_len, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (std::size_t r = 1; r < counts.size(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
    std::vector<float> global(where.rank == 0 ? o.n : 0);
    MPI_Gatherv(local.data(), my_len, MPI_FLOAT, global.data(), counts.data(), displs.data(), MPI_FLOAT, 0,
                MPI_COMM_WORLD);
    if (where.rank == 0) {
      ew::Context one(ew::Backend::scalar);
      std::vector<float> ga(o.n), gb(o.n), gc(o.n, -1.0f);
      for (std::size_t i = 0; i < o.n; ++i) ga[i] = input(0, i), gb[i] = input(1, i);
      ew::triad<float>(one, ga, kScale, gb, gc);
      std::size_t differ = 0, first = o.n;
      for (std::size_t i = 0; i < o.n; ++i)
        if (std::memcmp(&gc[i], &global[i], sizeof(float)) != 0) differ += 1, first = std::min(first, i);
      if (differ) {
        std::printf("verify: FAILED: %zu of %zu elements differ from one process (first at %zu)\n", differ, o.n, first);
        status = 1;
      } else {
        std::printf("verify: c is bit-identical to one process's triad (%zu elements)\n", o.n);
      }
    }
  }

  if (where.rank == 0) {
    const double best = times.front(), median = times[times.size() / 2];
    std::printf("mpi_triad: %d rank(s), %d per node, backend %s, n %zu f32, block %zu, reps %d\n", where.ranks,
                where.local_ranks, ctx.backend_name(), o.n, o.block, o.reps);
    std::printf("time: best %.3f ms, median %.3f ms, %.1f GB/s (12 bytes per element, slowest rank)\n", best * 1e3,
                median * 1e3, 12.0 * static_cast<double>(o.n) / best / 1e9);
    std::printf("checksum: bits 0x%016" PRIx64 " sum %a (%.17g)\n", all_bits, total, total);
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = run(argc, argv);
  } catch (const std::exception& e) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "mpi_triad (rank %d): %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
