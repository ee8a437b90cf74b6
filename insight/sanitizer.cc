#include "insight/sanitizer.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "base/hex.h"
#include "base/json_integer.h"
#include "base/zero_buffer.h"
#include "model/core/core.h"
#include "runtime/platform/sim/sim_platform.h"
#include "runtime/sdma_workspace.h"

namespace pfsim::insight {

namespace {

std::string ns_text(Tick ps) {
    std::ostringstream os;
    os.precision(3);
    os << std::fixed << static_cast<double>(ps) / 1e3 << " ns";
    return os.str();
}

}  // namespace

const char* severity_name(Severity s) {
    switch (s) {
        case Severity::Info: return "info";
        case Severity::Warning: return "warning";
        case Severity::Error: return "error";
    }
    return "";
}

Sanitizer::Sanitizer(SimPlatform& platform) : platform_(platform), start_(platform.now_ps()) {
    platform.kernel_side().add_observer(this);
    for (auto* cores : {&platform.vector_cores(), &platform.cube_cores()}) {
        for (const auto& core : *cores) core->add_observer(this);
    }
    platform.soc().sdma.log_requests(&engine_log_);
}

Sanitizer::~Sanitizer() { detach(); }

void Sanitizer::detach() {
    if (finished_) return;
    finished_ = true;
    platform_.kernel_side().remove_observer(this);
    for (auto* cores : {&platform_.vector_cores(), &platform_.cube_cores()}) {
        for (const auto& core : *cores) core->remove_observer(this);
    }
    platform_.soc().sdma.log_requests(nullptr);
}

Sanitizer::Context& Sanitizer::context_of(const rt::PrefetchAsyncContext& ctx, ContextKey* key) {
    Core& core = calling_core();
    const ContextKey k{core.core_id(), runs_[core.core_id()], &ctx};
    session_context_[{core.core_id(), runs_[core.core_id()], &ctx.session}] = k;
    if (key) *key = k;
    return contexts_[k];
}

const Sanitizer::Post* Sanitizer::find_post(const rt::AsyncSession* session, uint64_t post_id) const {
    Core& core = calling_core();
    auto it = session_context_.find({core.core_id(), runs_.count(core.core_id()) ? runs_.at(core.core_id()) : 0, session});
    if (it == session_context_.end()) return nullptr;
    auto ctx = contexts_.find(it->second);
    if (ctx == contexts_.end()) return nullptr;
    for (size_t p : ctx->second.posts) {
        if (posts_[p].id == post_id) return &posts_[p];
    }
    return nullptr;
}

std::string Sanitizer::session_text(uint64_t workspace, uint32_t group) const {
    return "channel group " + std::to_string(group) + " (workspace " + hex(workspace) + ")";
}

Finding Sanitizer::about(const Post& p, const std::string& kind, Severity severity, const std::string& what) const {
    Finding f;
    f.kind = kind;
    f.severity = severity;
    f.what = what;
    f.session = session_text(p.workspace, p.group);
    f.event = p.id;
    f.region = p.gm;
    f.region_bytes = p.bytes;
    return f;
}

void Sanitizer::add(Finding f, size_t site_call, size_t other_call) {
    pending_.push_back({std::move(f), site_call, other_call});
}

void Sanitizer::carry(const std::vector<CarriedPost>& posts) { carried_ = posts; }

void Sanitizer::check_scratch(Core& core, Context& ctx, size_t noticed_by, bool placed) {
    const ZeroBuffer& ub = core.ub();
    if (ub.size() < kScratchBytes) return;
    std::vector<uint8_t> now(ub.data(), ub.data() + kScratchBytes);
    const Post* in_flight = nullptr;
    for (size_t p : ctx.posts) {
        if (!posts_[p].done && !posts_[p].deferred) in_flight = &posts_[p];
    }
    auto tile = scratch_tile_.find(core.core_id());
    const bool changed = !ctx.scratch.empty() && now != ctx.scratch;
    ctx.scratch = std::move(now);
    if (!in_flight || !(placed || changed)) return;
    const size_t tile_call = tile == scratch_tile_.end() ? kNoCall : tile->second.call;
    if (tile_call != kNoCall && tile_call == ctx.reported_tile) return;  // that placement is reported
    ctx.reported_tile = tile_call;
    Finding f;
    f.kind = "scratch-clobbered";
    f.severity = Severity::Error;
    f.what = placed ? "a tile was placed over UB [0, 256), the prefetch context's completion scratch, while its event was in flight"
                    : "UB [0, 256), the prefetch context's completion scratch, changed while its event was in flight";
    f.session = session_text(ctx.workspace, ctx.group);
    f.event = in_flight->id;
    f.region_space = "UB";
    f.other_role = "the event in flight was posted";
    f.region = 0;
    f.region_bytes = kScratchBytes;
    if (tile_call != kNoCall) {
        f.region = tile->second.offset;
        f.region_bytes = std::min(kScratchBytes, tile->second.offset + tile->second.bytes) - tile->second.offset;
        f.notes.push_back("the tile placed here covers UB [" + hex(f.region) + ", " + hex(f.region + f.region_bytes) +
                          ") of the scratch");
    }
    f.notes.push_back("on silicon the post's flag payload and every poll of the wait pass through this scratch: the "
                      "wait can read a clobbered word and return early or time out, and the poll overwrites the tile. "
                      "Place tiles at UB 0x100 or above while an event is in flight, or wait first");
    add(std::move(f), tile_call != kNoCall ? tile_call : noticed_by, in_flight->call);
}

void Sanitizer::session_built(const rt::PrefetchAsyncContext& ctx) {
    Core& core = calling_core();
    ContextKey key;
    Context& c = context_of(ctx, &key);
    c.workspace = ctx.session.workspace;
    c.group = ctx.session.group;
    builds_.push_back({key, c.workspace, c.group, record_call(core)});
}

void Sanitizer::publishing(const rt::PrefetchAsyncContext& ctx, uint64_t post_id, uint64_t gm, uint64_t bytes,
                           uint64_t) {
    Core& core = calling_core();
    ContextKey key;
    Context& c = context_of(ctx, &key);
    const size_t call = record_call(core);
    check_scratch(core, c, call, false);
    Post p;
    p.context = key;
    p.core = core.core_id();
    p.workspace = ctx.session.workspace;
    p.group = ctx.session.group;
    p.id = post_id;
    p.gm = gm;
    p.bytes = bytes;
    p.call = call;
    posts_.push_back(p);
    c.posts.push_back(posts_.size() - 1);

    // A region L2 already holds whole: the post moves nothing.
    const L2Cache& l2 = platform_.soc().l2;
    const uint64_t line = l2.line_bytes();
    uint64_t lines = 0, resident = 0;
    for (uint64_t a = gm / line * line; a < gm + bytes; a += line) {
        ++lines;
        resident += l2.resident(a) ? 1 : 0;
    }
    if (lines > 0 && resident == lines) {
        Finding f = about(p, "wasted-prefetch", Severity::Warning,
                          "every line of the region was already resident in L2 when it was posted");
        f.notes.push_back("the post costs the core its submission time and the engine a pass over " +
                          std::to_string(lines) + " lines for no gain: drop it, or prefetch a region not yet read");
        add(std::move(f), call);
        return;
    }
    for (uint64_t a = gm / line * line; a < gm + bytes; a += line) unread_[a / line] = posts_.size() - 1;
}

void Sanitizer::check_bounds(Core& core, const char* access, uint64_t gm, uint64_t bytes) {
    if (core.task_buffers().empty() || bytes == 0) return;
    const uint32_t id = core.core_id();
    auto cached = tensor_ranges_.find(id);
    if (cached == tensor_ranges_.end() || cached->second.first != runs_[id]) {
        std::vector<TensorRange> resolved;
        for (const Core::ArgBuffer& b : core.task_buffers()) {
            const uint64_t at = core.gm_address(reinterpret_cast<const volatile void*>(b.pointer), b.bytes);
            if (at != Core::kNotGm && b.bytes) resolved.push_back({b.arg, at, at + b.bytes});
        }
        cached = tensor_ranges_.insert_or_assign(id, std::make_pair(runs_[id], std::move(resolved))).first;
    }
    const std::vector<TensorRange>& ranges = cached->second.second;
    // The first byte of the access in none of the buffers.
    uint64_t at = gm;
    for (bool moved = true; moved && at < gm + bytes;) {
        moved = false;
        for (const TensorRange& r : ranges) {
            if (r.begin <= at && at < r.end) {
                at = r.end;
                moved = true;
            }
        }
    }
    if (at >= gm + bytes) return;
    // The buffer whose allocation granule holds that byte: past its end, or
    // before its start (a buffer that starts inside an allocation). Anywhere
    // else is another allocation (a workspace, a completion slab, a tensor the
    // kernel reaches another way): not this check's to judge.
    constexpr uint64_t kGranule = SimPlatform::kAllocAlign;
    const TensorRange *past = nullptr, *before = nullptr;
    for (const TensorRange& r : ranges) {
        if (r.end <= at && at < (r.end + kGranule - 1) / kGranule * kGranule && (!past || r.end > past->end)) past = &r;
        if (at < r.begin && r.begin / kGranule * kGranule <= at && (!before || r.begin < before->begin)) before = &r;
    }
    const TensorRange* r = past ? past : before;
    if (!r) return;
    if (!bounds_reported_.insert({id, runs_[id], r->arg, access}).second) return;
    Finding f;
    f.kind = "out-of-bounds";
    f.severity = Severity::Error;
    const std::string tensor = "tensor argument " + std::to_string(r->arg) + " (args[" + std::to_string(r->arg) + "])";
    if (past) {
        f.what = std::string(access) + " of " + std::to_string(bytes) + " bytes at offset " + std::to_string(at - r->end) +
                 " past the end of " + tensor + ", outside every tensor the task was given";
    } else {
        f.what = std::string(access) + " of " + std::to_string(bytes) + " bytes " + std::to_string(r->begin - at) +
                 " bytes before the start of " + tensor + ", outside every tensor the task was given";
    }
    f.region = gm;
    f.region_bytes = bytes;
    f.notes.push_back(tensor + ": its buffer is GM [" + hex(r->begin) + ", " + hex(r->end) + ") (" +
                      std::to_string(r->end - r->begin) + " bytes); the access " +
                      (past ? "reaches " + std::to_string(gm + bytes - r->end) + " bytes past its end"
                            : "starts " + std::to_string(r->begin - at) + " bytes before it") +
                      ", inside the same " + std::to_string(kGranule) + "-byte granule of its allocation");
    f.notes.push_back("on the board nothing faults there: a load reads the allocator's padding or a neighbouring "
                      "tensor (simpler's heap packs outputs at 64 B), a store overwrites it. Keep the access inside "
                      "the tensor (a tail tile's valid size, a loop bound)");
    add(std::move(f), record_call(core));
}

void Sanitizer::transfer_started(Core& core, bool write, uint64_t gm, uint64_t bytes) {
    check_bounds(core, write ? "a TSTORE" : "a TLOAD", gm, bytes);
    if (unread_.empty() || bytes == 0) return;
    const uint64_t line = platform_.soc().l2.line_bytes();
    if (!write) {
        for (uint64_t l = gm / line; l <= (gm + bytes - 1) / line; ++l) unread_.erase(l);
        return;
    }
    // Lines the store overwrites whole: it needs none of the bytes the prefetch brought.
    std::map<size_t, uint64_t> overwritten;  // post -> its lines
    for (uint64_t l = (gm + line - 1) / line; (l + 1) * line <= gm + bytes; ++l) {
        auto it = unread_.find(l);
        if (it == unread_.end()) continue;
        ++overwritten[it->second];
        unread_.erase(it);
    }
    for (const auto& [post, lines] : overwritten) {
        const Post& p = posts_[post];
        Finding f = about(p, "wasted-prefetch", Severity::Warning,
                          "lines the prefetch brought into L2 were overwritten whole by a core before any core read them");
        f.other_role = "the store that overwrote them";
        f.notes.push_back(std::to_string(lines) + " of the region's lines: a store of a whole line needs no refill, so " +
                          "the prefetch moved data nobody used. Drop it, or prefetch what the kernel reads");
        add(std::move(f), p.call, record_call(core));
    }
}

void Sanitizer::dropped(const rt::PrefetchAsyncContext* ctx, uint64_t gm, uint64_t bytes, rt::DropReason why) {
    Core& core = calling_core();
    Finding f;
    f.kind = "dropped-prefetch";
    f.severity = Severity::Warning;
    f.what = "the prefetch did nothing: " + rt::drop_reason_text(why);
    if (ctx && ctx->session.valid) f.session = session_text(ctx->session.workspace, ctx->session.group);
    f.region = gm;
    f.region_bytes = bytes;
    f.notes.push_back("its event is handle 0, which every Wait calls done at once: on the board this is silent");
    add(std::move(f), record_call(core));
}

void Sanitizer::post_blocked(const rt::PrefetchAsyncContext& ctx, uint64_t since_ps, bool retired) {
    Core& core = calling_core();
    Finding f;
    f.kind = "post-blocked";
    f.severity = Severity::Info;
    f.what = "the post waited " + ns_text(core.now_ps() - since_ps) +
             " for the oldest of the session's outstanding posts to retire (64 flag slots, prefetch.max_posts)" +
             (retired ? "" : ", in vain: the prefetch was dropped");
    f.session = session_text(ctx.session.workspace, ctx.session.group);
    f.notes.push_back("wait on earlier events before posting more, or post fewer, larger prefetches");
    add(std::move(f), record_call(core));
}

void Sanitizer::doorbell_held(const rt::PrefetchAsyncContext& ctx, uint64_t since_ps) {
    Core& core = calling_core();
    Finding f;
    f.kind = "cold-channel";
    f.severity = Severity::Warning;
    f.what = "the post's doorbell held the core " + ns_text(core.now_ps() - since_ps) +
             ": its channel was cold, and the engine publishes cold channels one at a time (about 92 us each)";
    f.session = session_text(ctx.session.workspace, ctx.session.group);
    if (platform_.config().choice("prefetch.protocol") == "2026-07") {
        f.notes.push_back("this PTO-ISA (prefetch.protocol 2026-07) has no channel warm-up: the first post on each "
                          "channel pays it, longer with more channels (pto-isa #242); from 7ddaa823 on (protocol "
                          "2026-08) the runtime warms every channel when the worker starts");
    } else {
        f.notes.push_back("the worker's channel warm-up did not run (--no-warmup) or did not reach this channel: "
                          "let it warm every channel when the worker starts");
    }
    add(std::move(f), record_call(core));
}

void Sanitizer::waited(const rt::AsyncEvent& evt, const rt::AsyncSession& session, bool done, bool test, uint64_t) {
    if (evt.handle == 0) return;
    Core& core = calling_core();
    const uint64_t post_id = evt.handle & ((uint64_t{1} << rt::kHandleQueueShift) - 1);
    if (evt.posted_on && evt.posted_on != &session) {
        const Post* p = find_post(evt.posted_on, post_id);
        Finding f;
        f.kind = "mismatched-wait";
        f.severity = Severity::Error;
        f.what = std::string(test ? "Test" : "Wait") + " of an event with the session of another prefetch context";
        f.session = session_text(session.workspace, session.group);
        f.event = post_id;
        if (p) {
            f.region = p->gm;
            f.region_bytes = p->bytes;
        }
        f.other_role = "the event was posted on another context";
        f.notes.push_back("the wait polls that session's post-done record and post ids, not the event's: it can return "
                          "before the prefetch is done; wait with the session of the context that posted it");
        add(std::move(f), record_call(core), p ? p->call : kNoCall);
        return;
    }
    auto key = session_context_.find({core.core_id(), runs_[core.core_id()], &session});
    if (key == session_context_.end()) return;
    Context& ctx = contexts_[key->second];
    check_scratch(core, ctx, record_call(core), false);
    if (!done) return;
    for (size_t p : ctx.posts) {
        if (posts_[p].id <= post_id) posts_[p].done = true;  // a later post's completion covers earlier ones
    }
}

void Sanitizer::deferred(const rt::AsyncEvent& evt) {
    const uint64_t post_id = evt.handle & ((uint64_t{1} << rt::kHandleQueueShift) - 1);
    if (const Post* p = find_post(evt.posted_on, post_id)) posts_[static_cast<size_t>(p - posts_.data())].deferred = true;
}

void Sanitizer::tile_placed(Core& core, Buffer b, uint64_t offset, uint64_t bytes) {
    if (b != Buffer::Ub || offset >= kScratchBytes) return;
    const size_t call = record_call(core);
    scratch_tile_[core.core_id()] = {call, offset, bytes};
    for (auto& [key, ctx] : contexts_) {
        if (std::get<0>(key) == core.core_id() && std::get<1>(key) == runs_[core.core_id()]) check_scratch(core, ctx, call, true);
    }
}

void Sanitizer::scalar_loaded(Core& core, uint64_t gm, uint64_t bytes) { check_bounds(core, "a scalar load", gm, bytes); }

void Sanitizer::scalar_stored(Core& core, uint64_t gm, uint64_t bytes) {
    check_bounds(core, "a scalar store", gm, bytes);
    auto& dirty = dirty_[core.core_id()];
    for (uint64_t a = gm; a < gm + bytes;) {
        const uint64_t line = a / kDcacheLine * kDcacheLine;
        const uint64_t end = std::min(gm + bytes, line + kDcacheLine);
        uint64_t mask = 0;
        for (uint64_t i = a; i < end; ++i) mask |= uint64_t{1} << (i - line);
        auto it = dirty.find(line);
        if (it == dirty.end()) it = dirty.emplace(line, DirtyLine{record_call(core), 0}).first;
        it->second.mask |= mask;
        a = end;
    }
}

void Sanitizer::cache_flushed(Core& core, uint64_t gm, bool entire) {
    auto& dirty = dirty_[core.core_id()];
    auto flush = [&](std::map<uint64_t, DirtyLine>::iterator it) {
        flushed_lines_[it->first].push_back({core.core_id(), it->second.mask, it->second.call, core.now_ps()});
        return dirty.erase(it);
    };
    if (entire) {
        for (auto it = dirty.begin(); it != dirty.end();) it = flush(it);
    } else if (auto it = dirty.find(gm / kDcacheLine * kDcacheLine); it != dirty.end()) {
        flush(it);
    }
}

void Sanitizer::kernel_returned(Core& core) {
    const uint32_t id = core.core_id();
    last_return_ = std::max<Tick>(last_return_, core.now_ps());
    const size_t at_return = record_call(core);
    for (auto& [key, ctx] : contexts_) {
        if (std::get<0>(key) != id || std::get<1>(key) != runs_[id]) continue;
        check_scratch(core, ctx, at_return, false);
        for (size_t p : ctx.posts) {
            const Post& post = posts_[p];
            if (post.done || post.deferred) continue;
            Finding f = about(post, "never-waited", Severity::Info,
                              "the kernel returned without waiting for this prefetch or registering it for deferred "
                              "completion");
            f.notes.push_back("fire-and-forget is how production code warms weights; the risk: the next session built on "
                              "this channel group zeroes its post-done record and restarts post ids at 1, so this post's "
                              "late flag can make that session's wait return early (see stale-completion)");
            add(std::move(f), post.call);
        }
    }
    for (const auto& [line, d] : dirty_[id]) {
        Finding f;
        f.kind = "unflushed-gm-store";
        f.severity = Severity::Error;
        f.what = "a raw __gm__ store whose data-cache line no dcci flushed before the kernel returned";
        f.region = line;
        f.region_bytes = kDcacheLine;
        f.notes.push_back("on the board the store may sit in the core's data cache: other cores, the AICPU and the host "
                          "do not see it; dcci(ptr, SINGLE_CACHE_LINE) the line (or ENTIRE_DATA_CACHE) after storing");
        add(std::move(f), d.call, at_return);
    }
    dirty_[id].clear();
    scratch_tile_.erase(id);
    ++runs_[id];
}

void Sanitizer::match_flags() {
    // Each post's flag request copies its flag slot to its group's post-done
    // record; the engine runs one queue's requests in order, so the k-th such
    // copy executed is the k-th post with that (slot, record).
    std::map<std::pair<uint64_t, uint64_t>, std::vector<Tick>> copies;
    for (const ExecutedRequest& r : engine_log_) {
        if (r.request.opcode == kSdmaOpCopy) copies[{r.request.src, r.request.dst}].push_back(r.finished);
    }
    std::vector<size_t> order(posts_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return calls_.time(posts_[a].call) < calls_.time(posts_[b].call); });
    std::map<std::pair<uint64_t, uint64_t>, size_t> seen;
    for (size_t i : order) {
        Post& p = posts_[i];
        const std::pair<uint64_t, uint64_t> key{rt::WorkspaceLayout::flag_slot(p.workspace, p.group, p.id),
                                                rt::WorkspaceLayout::post_done(p.workspace, p.group, 0)};
        const size_t k = seen[key]++;
        auto it = copies.find(key);
        if (it != copies.end() && k < it->second.size()) p.landed = it->second[k];
    }
}

void Sanitizer::analyse_sessions() {
    // stale completion: a session built on a group while an earlier session's
    // flag request on it is still in flight.
    for (const Build& b : builds_) {
        const Tick at = calls_.time(b.call);
        const Post* late = nullptr;
        for (const Post& p : posts_) {
            if (p.workspace != b.workspace || p.group != b.group || p.context == b.context) continue;
            if (calls_.time(p.call) <= at && p.landed > at && (!late || p.id > late->id)) late = &p;
        }
        // The last run's post whose flag landed after that run ended, later than this build came after this run began.
        const CarriedPost* earlier = nullptr;
        for (const CarriedPost& c : carried_) {
            if (!late && c.workspace == b.workspace && c.group == b.group && at - std::min(at, start_) < c.late_by &&
                (!earlier || c.id > earlier->id)) {
                earlier = &c;
            }
        }
        if (earlier) {
            Finding f;
            f.kind = "stale-completion";
            f.severity = Severity::Error;
            f.what = "a session was built on a channel group while a flag request the last run on this worker posted "
                     "on it, landing after that run ended, can still be in flight on the board";
            f.session = session_text(b.workspace, b.group);
            f.event = earlier->id;
            f.region = earlier->gm;
            f.region_bytes = earlier->bytes;
            f.other_role = "the earlier run's post in flight";
            f.notes.push_back("the last run's flag landed " + ns_text(earlier->late_by) +
                              " after its last kernel returned; this session was built " + ns_text(at - std::min(at, start_)) +
                              " after this run began. The host starts a worker's next run as soon as the graph is done "
                              "(pfsim lets the engine drain first), so on the board the build can zero the post-done "
                              "record before that flag writes post id " + std::to_string(earlier->id) +
                              " into it: a wait of this session on any post up to that id can return before its "
                              "prefetch is done. Wait for the warm's event before the run ends, or register it for "
                              "deferred completion");
            pending_.push_back({std::move(f), b.call, kNoCall, &earlier->site});
            continue;
        }
        if (!late) continue;
        Finding f = about(*late, "stale-completion", Severity::Error,
                          "a session was built on a channel group while a flag request of an earlier session on it was "
                          "in flight");
        f.other_role = "the earlier session's post in flight";
        f.notes.push_back("the build zeroed the post-done record and restarted post ids at 1; the earlier flag " +
                          std::string(late->landed == kNever ? "never landed in this run"
                                                             : "lands at +" + ns_text(late->landed - std::min(late->landed, start_))) +
                          " and writes post id " + std::to_string(late->id) +
                          ": a wait of this session on any post up to that id can return before its prefetch is done. "
                          "Wait for the earlier events (or register them for deferred completion) before building "
                          "another session on the group");
        add(std::move(f), b.call, late->call);
    }
    // shared channel group: two cores post on one group while either has posts in flight.
    std::set<std::pair<size_t, size_t>> reported;
    for (const Post& p : posts_) {
        const Tick at = calls_.time(p.call);
        for (const Post& q : posts_) {
            if (q.core == p.core || q.workspace != p.workspace || q.group != p.group) continue;
            if (!(calls_.time(q.call) <= at && at < q.landed)) continue;
            if (!reported.insert({p.call, q.call}).second) continue;
            Finding f = about(p, "shared-channel-group", Severity::Error,
                              "two cores post on one channel group while one of them has a post in flight");
            f.other_role = "the other core's post in flight";
            f.notes.push_back("their sessions share one submission ring, its tail and one post-done record: requests "
                              "overwrite each other and waits see the other core's post ids. The group is the block "
                              "index, which both vector cores of a cluster share: prefetch from one of them (or give "
                              "each its own group)");
            add(std::move(f), p.call, q.call);
            break;
        }
    }
    // lost writes: two cores wrote different bytes of one 64 B line and each
    // flushed it, each holding its copy while the other did (from its first
    // store to its flush): one copy is stale when the other is written back.
    for (const auto& [line, flushes] : flushed_lines_) {
        for (size_t i = 0; i < flushes.size(); ++i) {
            for (size_t j = i + 1; j < flushes.size(); ++j) {
                const LineFlush &a = flushes[i], &b = flushes[j];
                if (a.core == b.core || a.mask == b.mask) continue;
                if (!(calls_.time(a.call) < b.flushed && calls_.time(b.call) < a.flushed)) continue;
                Finding f;
                f.kind = "lost-gm-write";
                f.severity = Severity::Error;
                f.what = "two cores wrote different bytes of one 64 B line and each flushed it";
                f.region = line;
                f.region_bytes = kDcacheLine;
                f.other_role = "the other core's store to the line";
                f.notes.push_back("dcci writes back the whole line: the later flush overwrites the other core's bytes "
                                  "with its stale copy, and those writes are lost on the board. Give each core its own "
                                  "64 B line (a 64 B stride)");
                add(std::move(f), flushes[j].call, flushes[i].call);
                j = flushes.size();
                i = flushes.size();
            }
        }
    }
}

SanitizerReport Sanitizer::finish(const std::vector<Suppression>& suppressions) {
    SanitizerReport report;
    if (finished_) return report;
    detach();
    match_flags();
    analyse_sessions();

    const std::vector<Site> sites = calls_.resolve(start_);
    auto site = [&](size_t call) { return call == kNoCall ? Site{} : sites[call]; };
    for (const Post& p : posts_) {
        if (p.landed != kNever && p.landed > last_return_) {
            in_flight_.push_back({p.workspace, p.id, p.gm, p.bytes, p.group, site(p.call), p.landed - last_return_});
        }
    }
    std::stable_sort(pending_.begin(), pending_.end(),
                     [&](const Pending& a, const Pending& b) { return calls_.time(a.site) < calls_.time(b.site); });
    // Findings of one kind at one site pair, for one reason, fold into one.
    std::map<std::tuple<std::string, std::string, std::string, std::string>, size_t> folded;
    for (Pending& p : pending_) {
        Finding f = std::move(p.finding);
        f.site = site(p.site);
        f.other = p.other_site ? *p.other_site : site(p.other);
        bool suppressed = false;
        for (const Suppression& s : suppressions) {
            suppressed |= (s.kind == "*" || s.kind == f.kind) && std::regex_match(f.site.where, s.site);
        }
        if (suppressed) {
            ++report.suppressed;
            continue;
        }
        const auto key = std::make_tuple(f.kind, f.site.where.empty() ? f.site.core : f.site.where, f.other.where, f.what);
        auto it = folded.find(key);
        if (it != folded.end()) {
            ++report.findings[it->second].count;
            continue;
        }
        folded[key] = report.findings.size();
        report.findings.push_back(std::move(f));
    }
    return report;
}

uint64_t SanitizerReport::count(Severity s) const {
    uint64_t n = 0;
    for (const Finding& f : findings) n += f.severity == s ? f.count : 0;
    return n;
}

std::string SanitizerReport::text(uint64_t print_limit) const {
    std::ostringstream os;
    const std::string bar = "========= ";
    auto who = [](const Site& s) {
        return "by " + s.core + (s.task.empty() ? "" : " (" + s.task + ")") + " at +" + ns_text(static_cast<Tick>(s.time_ns * 1e3 + 0.5));
    };
    uint64_t printed = 0;
    for (const Finding& f : findings) {
        if (printed++ >= print_limit) break;
        std::string name = f.kind;
        for (char& ch : name) ch = ch == '-' ? ' ' : ch;
        os << bar << (f.severity == Severity::Error ? "ERROR" : f.severity == Severity::Warning ? "WARNING" : "INFO") << ": "
           << name << ": " << f.what << (f.count > 1 ? " [" + std::to_string(f.count) + " times]" : "") << "\n";
        os << bar << "    at " << (f.site.where.empty() ? "an unknown line" : f.site.where) << "\n";
        os << bar << "    " << who(f.site) << "\n";
        if (!f.session.empty() || f.event) {
            os << bar << "    " << (f.session.empty() ? "" : "session: " + f.session)
               << (f.event ? std::string(f.session.empty() ? "" : ", ") + "event: post " + std::to_string(f.event) : "")
               << "\n";
        }
        if (f.region_bytes) {
            os << bar << "    " << f.region_space << " region [" << hex(f.region) << ", " << hex(f.region + f.region_bytes)
               << ") (" << f.region_bytes << " bytes)\n";
        }
        if (f.other.known()) {
            os << bar << "    " << f.other_role << " at " << (f.other.where.empty() ? "an unknown line" : f.other.where)
               << "\n";
            os << bar << "        " << who(f.other) << "\n";
        }
        for (const std::string& n : f.notes) os << bar << "    " << n << "\n";
        os << bar << "\n";
    }
    if (findings.size() > print_limit) {
        os << bar << (findings.size() - print_limit) << " more not shown (--print-limit " << print_limit << ")\n";
    }
    auto n = [](uint64_t k, const std::string& what) { return std::to_string(k) + " " + what + (k == 1 ? "" : "s"); };
    os << bar << "ERROR SUMMARY: " << n(count(Severity::Error), "error") << ", " << n(count(Severity::Warning), "warning")
       << ", " << n(count(Severity::Info), "info") << (suppressed ? ", " + std::to_string(suppressed) + " suppressed" : "")
       << "\n";
    return os.str();
}

namespace {

nlohmann::json site_json(const Site& s) {
    return {{"where", s.where}, {"core", s.core}, {"task", s.task}, {"time_ns", s.time_ns}};
}

Site site_from(const nlohmann::json& j) {
    Site s;
    s.where = j.at("where").get<std::string>();
    s.core = j.at("core").get<std::string>();
    s.task = j.at("task").get<std::string>();
    s.time_ns = j.at("time_ns").get<double>();
    return s;
}

}  // namespace

nlohmann::json SanitizerReport::to_json() const {
    nlohmann::json list = nlohmann::json::array();
    for (const Finding& f : findings) {
        nlohmann::json j = {{"kind", f.kind}, {"severity", severity_name(f.severity)}, {"what", f.what},
                            {"site", site_json(f.site)}, {"count", f.count}, {"notes", f.notes}};
        if (!f.session.empty()) j["session"] = f.session;
        if (f.event) j["event"] = f.event;
        if (f.region_bytes) j["region"] = {{"space", f.region_space}, {"addr", f.region}, {"bytes", f.region_bytes}};
        if (f.other.known()) j["other"] = {{"role", f.other_role}, {"site", site_json(f.other)}};
        list.push_back(j);
    }
    return {{"errors", count(Severity::Error)}, {"warnings", count(Severity::Warning)}, {"infos", count(Severity::Info)},
            {"suppressed", suppressed}, {"findings", list}};
}

SanitizerReport SanitizerReport::from_json(const nlohmann::json& j) {
    SanitizerReport r;
    r.suppressed = json_integer<uint64_t>(j.at("suppressed"));
    for (const nlohmann::json& e : j.at("findings")) {
        Finding f;
        f.kind = e.at("kind").get<std::string>();
        const std::string sev = e.at("severity").get<std::string>();
        f.severity = sev == "error" ? Severity::Error : sev == "warning" ? Severity::Warning : Severity::Info;
        f.what = e.at("what").get<std::string>();
        f.site = site_from(e.at("site"));
        f.count = json_integer<uint64_t>(e.at("count"));
        f.notes = e.at("notes").get<std::vector<std::string>>();
        f.session = e.value("session", "");
        f.event = json_integer_or<uint64_t>(e, "event", 0);
        if (e.contains("region")) {
            f.region_space = e["region"].at("space").get<std::string>();
            f.region = json_integer<uint64_t>(e["region"].at("addr"));
            f.region_bytes = json_integer<uint64_t>(e["region"].at("bytes"));
        }
        if (e.contains("other")) {
            f.other_role = e["other"].at("role").get<std::string>();
            f.other = site_from(e["other"].at("site"));
        }
        r.findings.push_back(std::move(f));
    }
    return r;
}

std::vector<Suppression> read_suppressions(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::invalid_argument(path + ": cannot read the suppressions file");
    static const std::set<std::string> kinds = {"stale-completion", "never-waited", "mismatched-wait",
                                                "shared-channel-group", "scratch-clobbered", "dropped-prefetch",
                                                "post-blocked", "cold-channel", "wasted-prefetch", "unflushed-gm-store",
                                                "lost-gm-write", "out-of-bounds", "*"};
    std::vector<Suppression> out;
    int n = 0;
    for (std::string line; std::getline(in, line);) {
        ++n;
        const size_t hash = line.find('#');
        if (hash != std::string::npos) line.erase(hash);
        std::istringstream words(line);
        Suppression s;
        if (!(words >> s.kind)) continue;
        std::string extra;
        words >> s.pattern;
        if (words >> extra) {
            throw std::invalid_argument(path + ":" + std::to_string(n) + ": expected 'KIND [SITE-REGEX]', found more");
        }
        if (!kinds.count(s.kind)) {
            throw std::invalid_argument(path + ":" + std::to_string(n) + ": unknown finding kind '" + s.kind + "'");
        }
        if (s.pattern.empty()) s.pattern = ".*";
        try {
            s.site = std::regex(s.pattern);
        } catch (const std::regex_error& e) {
            throw std::invalid_argument(path + ":" + std::to_string(n) + ": the site pattern '" + s.pattern +
                                        "' is not a regular expression: " + e.what());
        }
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace pfsim::insight
