// The CPU thread team. Why it is not an OpenMP parallel region (docs/performance/cpu.md,
// "Why calls collapsed"): a region hands every thread a fixed share and ends only when the
// slowest thread has done its share. A thread that is not running (its core taken by another
// process, or still waking from sleep) holds its share until the scheduler gives it a time
// slice, ~4 ms, and the whole call waits: a 10 us call became a 4 ms one. Here the output is
// cut into many small pieces that threads claim one at a time, the calling thread claims too,
// and the call ends when every piece is done. A thread that is not running claims nothing, so
// only a piece already started can hold a call back, and a piece takes microseconds. Each
// thread owns a share of the pieces that it takes first, the same share call after call, so
// arrays that fit in the cores' caches stay where the previous call left them.
//
// Workers spin for a short window after each call (a call that follows soon finds them
// awake), then sleep, which gives their cores back to the scheduler, so that a preempted
// thread of this process can move to a free core.
#include "team.hpp"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "ew/error.hpp"

namespace ew::detail::highway {

namespace {

std::atomic<std::size_t> parallel_bytes{default_parallel_threshold_bytes};

constexpr std::size_t cache_line = 64;
// Pieces of output a thread claims at a time: large enough that a claim (one atomic
// operation on a shared line) costs under 1 % of the piece, small enough that a piece is
// a few microseconds and that a call has several pieces per thread to balance.
constexpr std::size_t min_piece_bytes = std::size_t(16) << 10;
constexpr std::size_t max_piece_bytes = std::size_t(256) << 10;
constexpr std::size_t pieces_per_thread = 8;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

using Clock = std::chrono::steady_clock;

}  // namespace

long spin_window_microseconds() {
  static const long us = [] {
    const char* text = std::getenv("EW_SPIN_US");
    if (!text || !*text) return 200L;
    // Decimal digits alone, as EW_DEVICE takes them (strtol would also take a sign and
    // leading blanks).
    const std::size_t digits = std::strspn(text, "0123456789");
    const long v = text[digits] == '\0' && digits <= 7 ? std::strtol(text, nullptr, 10) : -1;
    if (v < 0 || v > 1000000)
      throw Error(Errc::invalid_argument, std::string("EW_SPIN_US='") + text +
                                                   "' is not a number of microseconds (accepted: 0 to 1000000)");
    return v;
  }();
  return us;
}

namespace {

std::chrono::microseconds spin_window() { return std::chrono::microseconds(spin_window_microseconds()); }

// One call's work. A worker reads it only after seeing the call's number published, and
// uses it only after a claim in that call succeeded, i.e. while the call is still running.
struct Job {
  std::atomic<PieceFunction> body{nullptr};
  std::atomic<void*> context{nullptr};
  std::atomic<std::size_t> n{0}, head{0}, piece{0};  // piece 0 is [0, head); piece k is head + (k-1)*piece
  std::atomic<std::uint32_t> pieces{0}, groups{0};
};

// The pieces of thread g's share, [g * pieces / groups, (g + 1) * pieces / groups): its owner
// takes them first and in order, so a repeated call gives each thread the same part of the
// arrays as the call before (still in its core's caches when they fit), like a static
// OpenMP schedule; a thread that has finished its own share takes from the others'.
// A thief takes from the back of a share, so that an owner that starts late loses the same
// tail call after call, and the thief finds that tail in its own cache the next time.
struct alignas(64) Group {
  // tag << 32 | front << 16 | back: pieces [begin + front, begin + back) are unclaimed; the
  // tag is the call number's low 32 bits (call_tag).
  std::atomic<std::uint64_t> word{0};
};
// A group word holds only 32 bits of the call number, so calls are compared by those bits:
// compared whole, the 2^32-nd call would find no word of its own and never finish. Tags come
// round again only after 2^32 calls, far longer than any thread lags one call behind.
constexpr std::uint64_t call_tag(std::uint64_t call) { return call & 0xFFFFFFFFu; }
constexpr std::size_t max_share = 0xFFFF;  // pieces in one share (16 bits each for front and back)

// Threads beyond this many share the last groups' work (no machine here comes close).
constexpr int max_groups = 1024;

// The CPUs the workers may run on: the calling thread's, unless OpenMP bound that thread to
// fewer CPUs than its places cover. (With OMP_PROC_BIND set, libgomp binds the initial
// thread to one place when it loads, and threads started from it inherit that: a whole team
// would share one core.)
cpu_set_t worker_cpus() {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return mine;
  cpu_set_t places;
  CPU_ZERO(&places);
  for (int p = 0; p < omp_get_num_places(); ++p) {
    std::vector<int> ids(static_cast<std::size_t>(std::max(0, omp_get_place_num_procs(p))));
    omp_get_place_proc_ids(p, ids.data());
    for (int id : ids)
      if (id >= 0 && id < CPU_SETSIZE) CPU_SET(id, &places);
  }
  return CPU_COUNT(&places) > CPU_COUNT(&mine) ? places : mine;
}

class Team {
 public:
  // Never destroyed: worker threads may still be spinning when the process exits, and a
  // process-wide team must outlive every static that calls it.
  static Team& get() {
    static const bool registered = [] {
      pthread_atfork(nullptr, nullptr, [] { instance().store(nullptr); });  // a child has none of the threads
      return true;
    }();
    (void)registered;
    Team* team = instance().load(std::memory_order_acquire);
    if (team) return *team;
    Team* fresh = new Team;  // first use, or after fork: a fresh team (the parent's stays unused)
    if (instance().compare_exchange_strong(team, fresh, std::memory_order_acq_rel)) return *fresh;
    delete fresh;  // another thread's came first
    return *team;
  }

  void set_calls(std::uint64_t calls) {
    std::lock_guard<std::mutex> own(busy_);
    calls_ = calls;
  }

  // False when the team is busy (another application thread's call, or a call from inside
  // a piece): the caller then runs the work itself.
  bool run(int threads, std::size_t n, std::uintptr_t out, std::size_t element, PieceFunction body,
           void* context) {
    std::unique_lock<std::mutex> own(busy_, std::try_to_lock);
    if (!own.owns_lock()) return false;
    spin_window();  // a malformed EW_SPIN_US throws here, before any thread starts
    threads = std::min(threads, max_groups);
    grow(threads - 1);

    // Piece bounds on output lines: piece 0 ends at the first line boundary at or after
    // `head` elements, every other piece is whole lines (the last one takes the remainder).
    const std::size_t per_line = std::max<std::size_t>(1, cache_line / element);
    const std::size_t head = std::min(n, (cache_line - out % cache_line) % cache_line / element);
    const std::size_t lines = (n - head + per_line - 1) / per_line;
    std::size_t piece_lines = lines / (static_cast<std::size_t>(threads) * pieces_per_thread);
    piece_lines = std::clamp(piece_lines, min_piece_bytes / cache_line, max_piece_bytes / cache_line);
    piece_lines = std::max(piece_lines, lines / (static_cast<std::size_t>(threads) * (max_share - 1)) + 1);
    const std::size_t piece = piece_lines * per_line;
    const std::size_t pieces = 1 + (n - head + piece - 1) / piece;

    const std::uint64_t call = ++calls_;
    job_.body.store(body, std::memory_order_relaxed);
    job_.context.store(context, std::memory_order_relaxed);
    job_.n.store(n, std::memory_order_relaxed);
    job_.head.store(head, std::memory_order_relaxed);
    job_.piece.store(piece, std::memory_order_relaxed);
    job_.pieces.store(static_cast<std::uint32_t>(pieces), std::memory_order_relaxed);
    job_.groups.store(static_cast<std::uint32_t>(threads), std::memory_order_relaxed);
    for (int g = 0; g < threads; ++g)
      groups_[g].word.store(call_tag(call) << 32 | (share_begin(pieces, threads, g + 1) - share_begin(pieces, threads, g)),
                            std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    published_.store(call, std::memory_order_seq_cst);  // publishes all of the above
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(sleep_);
      wake_.notify_all();
    }

    work(call, 0);
    // The rest are pieces other threads have started: wait awake briefly, then sleep in
    // short naps. A thread that sits preempted on a busy core waits for its time slice there
    // (ms); a core that goes idle pulls it over at once, and yielding would keep this one busy.
    const auto give_up_spinning = Clock::now() + std::chrono::microseconds(50);
    for (unsigned k = 0; done_.load(std::memory_order_acquire) < pieces; ++k) {
      if (k % 64 == 0 && Clock::now() > give_up_spinning)
        std::this_thread::sleep_for(std::chrono::microseconds(10));
      else
        cpu_relax();
    }
    return true;
  }

 private:
  Team() = default;
  static std::atomic<Team*>& instance() {
    static std::atomic<Team*> current{nullptr};
    return current;
  }

  static std::uint64_t share_begin(std::size_t pieces, int groups, int g) {
    return static_cast<std::uint64_t>(pieces) * static_cast<std::uint64_t>(g) / static_cast<std::uint64_t>(groups);
  }

  // Claims and runs pieces of call `call`: its own share (`me`) from the front, then the
  // others' from the back.
  void work(std::uint64_t call, int me) {
    std::uint32_t finished = 0;
    const int groups = static_cast<int>(job_.groups.load(std::memory_order_relaxed));
    for (int step = 0; step < groups; ++step) {
      const int g = (me + step) % groups;
      const bool own = step == 0;
      std::uint64_t word = groups_[g].word.load(std::memory_order_acquire);
      for (;;) {
        if (word >> 32 != call_tag(call)) {  // the call is over (this thread ran none of its pieces)
          if (finished) done_.fetch_add(finished, std::memory_order_release);
          return;
        }
        const std::uint64_t front = word >> 16 & max_share, back = word & max_share;
        if (front >= back) break;
        // Job fields read before the claim are those of `call`: the next call rewrites them
        // only after every piece of this one is done, and this piece is not yet claimed.
        const std::size_t pieces = job_.pieces.load(std::memory_order_relaxed);
        const std::size_t k = share_begin(pieces, groups, g) + (own ? front : back - 1);
        const PieceFunction body = job_.body.load(std::memory_order_relaxed);
        void* const context = job_.context.load(std::memory_order_relaxed);
        const std::size_t n = job_.n.load(std::memory_order_relaxed), head = job_.head.load(std::memory_order_relaxed),
                          piece = job_.piece.load(std::memory_order_relaxed);
        const std::uint64_t claimed = own ? word + (std::uint64_t(1) << 16) : word - 1;
        if (!groups_[g].word.compare_exchange_weak(word, claimed, std::memory_order_acq_rel, std::memory_order_acquire))
          continue;
        const std::size_t begin = k == 0 ? 0 : std::min(n, head + (k - 1) * piece);
        const std::size_t end = k == 0 ? head : std::min(n, head + k * piece);
        if (end > begin) body(context, begin, end);
        ++finished;
        word = groups_[g].word.load(std::memory_order_acquire);
      }
    }
    if (finished) done_.fetch_add(finished, std::memory_order_release);
  }

  // Runs before the call touches any data, so a thread that cannot be started (the process's
  // thread or memory limit) fails the call with nothing written. The workers started so far
  // stay: a call asking for fewer threads still runs, and a later one tries again.
  void grow(int wanted) {
    if (static_cast<int>(threads_.size()) >= wanted) return;
    const cpu_set_t cpus = worker_cpus();
    while (static_cast<int>(threads_.size()) < wanted) {
      const int index = static_cast<int>(threads_.size()) + 1;
      try {
        threads_.emplace_back([this, index, cpus] {
          if (CPU_COUNT(&cpus) > 0) pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus);
          worker(index);
        });
      } catch (const std::system_error& e) {
        throw Error(Errc::out_of_memory, "highway backend: the CPU team could not start worker thread " + std::to_string(index) + " of the " +
                                             std::to_string(wanted) + " that a call on " + std::to_string(wanted + 1) +
                                             " threads needs (" + e.what() +
                                             "); ask for fewer threads (ContextOptions::threads)");
      }
      threads_.back().detach();
    }
  }

  void worker(int index) {
    std::uint64_t seen = 0;
    for (;;) {
      // Wait for a call this worker has not seen: awake for the spin window, then asleep.
      std::uint64_t call = published_.load(std::memory_order_acquire);
      if (call == seen) {
        const auto until = Clock::now() + spin_window();
        for (unsigned k = 1; call == seen; ++k) {
          cpu_relax();
          call = published_.load(std::memory_order_acquire);
          if (call == seen && k % 256 == 0 && Clock::now() > until) {
            sleepers_.fetch_add(1, std::memory_order_seq_cst);
            std::unique_lock<std::mutex> lock(sleep_);
            wake_.wait(lock, [&] { return published_.load(std::memory_order_seq_cst) != seen; });
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
            call = published_.load(std::memory_order_acquire);
          }
        }
      }
      seen = call;
      if (index < static_cast<int>(job_.groups.load(std::memory_order_relaxed))) work(call, index);
    }
  }

  std::mutex busy_;  // one call at a time
  std::vector<std::thread> threads_;
  std::uint64_t calls_ = 0;
  alignas(cache_line) std::atomic<std::uint64_t> published_{0};  // number of the latest call
  alignas(cache_line) std::atomic<std::uint32_t> done_{0};       // pieces finished in this call
  alignas(cache_line) std::atomic<int> sleepers_{0};
  Job job_;
  std::unique_ptr<Group[]> groups_{new Group[max_groups]};
  std::mutex sleep_;
  std::condition_variable wake_;
};

}  // namespace

std::size_t parallel_threshold_bytes() { return parallel_bytes.load(std::memory_order_relaxed); }
void set_parallel_threshold_bytes(std::size_t bytes) { parallel_bytes.store(bytes, std::memory_order_relaxed); }
void set_team_call_count(std::uint64_t calls) { Team::get().set_calls(calls); }

void for_each_piece_impl(int threads, std::size_t n, const void* out, std::size_t element_bytes,
                         PieceFunction body, void* context) {
  if (n == 0) return;
  if (threads <= 1 || n * element_bytes < parallel_threshold_bytes() ||
      !Team::get().run(threads, n, reinterpret_cast<std::uintptr_t>(out), element_bytes, body, context))
    body(context, 0, n);
}

}  // namespace ew::detail::highway
