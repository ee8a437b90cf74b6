// The prefetch protocol sanitizer (`pfsim run|check ... --sanitize`): watches
// every prefetch, wait, UB tile placement, raw `__gm__` store and cache flush
// of a run, and reports the misuses silicon keeps silent, each at its call
// site in the user's kernel (docs/sanitizer.md lists the classes, with what
// each risks on the board).
//
// Contract: construct it on a platform before the run, destroy it (or call
// finish) after; while it lives it is the process's prefetch observer and
// every core's observer. It changes nothing the run computes or times.
#pragma once

#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "insight/call_log.h"
#include "model/common/time.h"
#include "model/core/core_observer.h"
#include "model/sdma/sdma_engine.h"
#include "runtime/prefetch.h"

namespace pfsim {
class SimPlatform;
}

namespace pfsim::insight {

enum class Severity { Info, Warning, Error };
const char* severity_name(Severity s);  // "info", "warning", "error"

struct Finding {
    std::string kind;  // stale-completion, never-waited, mismatched-wait, ... (docs/sanitizer.md)
    Severity severity = Severity::Error;
    std::string what;  // the class line: what happened
    Site site;
    std::string session;  // "channel group 3 (workspace 0x1000)"; "" when none
    uint64_t event = 0;   // the post id; 0 when none
    uint64_t region = 0, region_bytes = 0;  // the GM region (or, for a UB overlap, the UB range)
    std::string region_space = "GM";
    std::string other_role;  // how the other site is involved ("earlier post", ...)
    Site other;
    std::vector<std::string> notes;  // further lines: what it risks, what to change
    uint64_t count = 1;              // identical findings folded into this one
};

// One line of a suppressions file: "KIND [SITE-REGEX]" (KIND may be *).
struct Suppression {
    std::string kind;
    std::string pattern;  // matched against the whole "file:line" of the finding's site
    std::regex site;
};
// Reads a suppressions file; throws std::invalid_argument "FILE:LINE: ..." on
// a line that does not parse.
std::vector<Suppression> read_suppressions(const std::string& path);

struct SanitizerReport {
    std::vector<Finding> findings;  // by time of the site
    uint64_t suppressed = 0;        // findings a suppression removed
    uint64_t count(Severity s) const;
    // compute-sanitizer's shape: one block per finding (at most print_limit),
    // then "ERROR SUMMARY: N errors" (with warnings and infos).
    std::string text(uint64_t print_limit) const;
    nlohmann::json to_json() const;
    // Throws nlohmann::json::exception on a document that is not one.
    static SanitizerReport from_json(const nlohmann::json& j);
};

// A post whose flag request landed only after the last kernel of its run had
// returned: the host, which starts a persistent worker's next run as soon as
// the graph is done, may begin that run while the flag is still in flight
// (pfsim itself lets the engine drain first). The next run carries it
// (Sanitizer::carry), so a session it builds on that group soon enough is
// reported as a stale completion.
struct CarriedPost {
    uint64_t workspace = 0, id = 0, gm = 0, bytes = 0;
    uint32_t group = 0;
    Site site;           // as resolved in its own run
    Tick late_by = 0;    // from its run's last kernel return to the flag landing
};

class Sanitizer : public rt::PrefetchObserver, public CoreObserver {
public:
    explicit Sanitizer(SimPlatform& platform);
    // Before the run: posts of earlier runs still in flight (in_flight() of the last one).
    void carry(const std::vector<CarriedPost>& posts);
    // After finish(): this run's posts whose flags landed after its last kernel returned.
    const std::vector<CarriedPost>& in_flight() const { return in_flight_; }
    ~Sanitizer() override;
    Sanitizer(const Sanitizer&) = delete;
    Sanitizer& operator=(const Sanitizer&) = delete;

    // Stops watching; the findings of the run, call sites resolved, minus the suppressed.
    SanitizerReport finish(const std::vector<Suppression>& suppressions);

    // rt::PrefetchObserver
    void session_built(const rt::PrefetchAsyncContext& ctx) override;
    // The post's checks see L2 as the post found it, before its doorbells.
    void publishing(const rt::PrefetchAsyncContext& ctx, uint64_t post_id, uint64_t gm, uint64_t bytes,
                    uint64_t since_ps) override;
    void dropped(const rt::PrefetchAsyncContext* ctx, uint64_t gm, uint64_t bytes, rt::DropReason why) override;
    void post_blocked(const rt::PrefetchAsyncContext& ctx, uint64_t since_ps, bool retired) override;
    void doorbell_held(const rt::PrefetchAsyncContext& ctx, uint64_t since_ps) override;
    void waited(const rt::AsyncEvent& evt, const rt::AsyncSession& session, bool done, bool test, uint64_t since_ps) override;
    void deferred(const rt::AsyncEvent& evt) override;
    // CoreObserver
    void tile_placed(Core& core, Buffer b, uint64_t offset, uint64_t bytes) override;
    void scalar_stored(Core& core, uint64_t gm, uint64_t bytes) override;
    void scalar_loaded(Core& core, uint64_t gm, uint64_t bytes) override;
    void cache_flushed(Core& core, uint64_t gm, bool entire) override;
    void kernel_returned(Core& core) override;
    void transfer_started(Core& core, bool write, uint64_t gm, uint64_t bytes) override;

private:
    // A context lives on a kernel's stack: the same address on another core or
    // in another kernel run is another context.
    using ContextKey = std::tuple<uint32_t, uint64_t, const void*>;  // core id, its run, the context
    struct Context {
        uint64_t workspace = 0;
        uint32_t group = 0;
        std::vector<size_t> posts;     // into posts_
        std::vector<uint8_t> scratch;  // UB [0, 256) as the context last left it
        size_t reported_tile = kNoCall;  // the placement already reported against it
    };
    struct Post {
        ContextKey context;
        uint32_t core = 0;
        uint64_t workspace = 0, id = 0, gm = 0, bytes = 0;
        uint32_t group = 0;
        size_t call = 0;
        bool done = false, deferred = false, scratch_reported = false;
        Tick landed = kNever;  // when its flag request wrote the post-done record
    };
    struct Build {
        ContextKey context;
        uint64_t workspace = 0;
        uint32_t group = 0;
        size_t call = 0;
    };
    struct Placement {
        size_t call = 0;
        uint64_t offset = 0, bytes = 0;
    };
    struct DirtyLine {
        size_t call = 0;    // the first store since the line was last flushed
        uint64_t mask = 0;  // bytes written
    };
    struct LineFlush {
        uint32_t core = 0;
        uint64_t mask = 0;
        size_t call = 0;    // the first store of what it flushed
        Tick flushed = 0;
    };
    static constexpr Tick kNever = ~Tick{0};
    static constexpr size_t kNoCall = CallLog::kNone;
    static constexpr uint64_t kScratchBytes = 256;
    static constexpr uint64_t kDcacheLine = 64;

    size_t record_call(Core& core) { return calls_.record(core); }
    Context& context_of(const rt::PrefetchAsyncContext& ctx, ContextKey* key = nullptr);
    const Post* find_post(const rt::AsyncSession* session, uint64_t post_id) const;
    // An access of [gm, gm + bytes) by the kernel on `core` ("a scalar load",
    // "a TLOAD", ...) that leaves every tensor buffer its task was given for
    // the rest of one's allocation granule (an out-of-bounds finding, once per
    // kernel run, tensor and kind of access).
    void check_bounds(Core& core, const char* access, uint64_t gm, uint64_t bytes);
    // A tile placed over UB [0, 256), or a change to it, while ctx has an event in flight.
    void check_scratch(Core& core, Context& ctx, size_t noticed_by, bool placed);
    void add(Finding f, size_t site_call, size_t other_call = kNoCall);
    // A finding about post p: its session, event and region filled in.
    Finding about(const Post& p, const std::string& kind, Severity severity, const std::string& what) const;
    void detach();
    void match_flags();
    void analyse_sessions();
    std::string session_text(uint64_t workspace, uint32_t group) const;

    SimPlatform& platform_;
    const Tick start_;  // site times are reported from here
    std::vector<ExecutedRequest> engine_log_;
    CallLog calls_;
    std::map<ContextKey, Context> contexts_;
    std::map<std::tuple<uint32_t, uint64_t, const void*>, ContextKey> session_context_;  // by &ctx.session
    std::vector<Post> posts_;
    std::vector<Build> builds_;
    std::map<uint32_t, uint64_t> runs_;              // core id -> kernel runs returned
    std::map<uint32_t, Placement> scratch_tile_;     // core id -> the last UB tile placed over [0, 256)
    std::map<uint32_t, std::map<uint64_t, DirtyLine>> dirty_;  // core id -> dcache line -> its stores
    std::map<uint64_t, std::vector<LineFlush>> flushed_lines_;  // dcache line -> every flush of stores to it
    std::set<std::tuple<uint32_t, uint64_t, uint32_t, std::string>> bounds_reported_;  // core, its run, arg, access
    struct TensorRange {
        uint32_t arg;
        uint64_t begin, end;  // GM
    };
    // core id -> the kernel run its task's tensor buffers were resolved for, and them
    std::unordered_map<uint32_t, std::pair<uint64_t, std::vector<TensorRange>>> tensor_ranges_;
    std::unordered_map<uint64_t, size_t> unread_;  // L2 line a post filled that no core has read yet -> the post
    struct Pending {
        Finding finding;
        size_t site = kNoCall, other = kNoCall;
        const Site* other_site = nullptr;  // instead of `other`: a carried post's
    };
    std::vector<CarriedPost> carried_;  // the last run's posts whose flags landed after it ended
    Tick last_return_ = 0;              // the latest kernel return of this run
    std::vector<CarriedPost> in_flight_;
    std::vector<Pending> pending_;
    bool finished_ = false;
};

}  // namespace pfsim::insight
