// include/fp8gemm/tune.h on a Context: the TuningSelector (tune) installed as its selector and
// timed with the GraphTimer (measure). tune itself knows backends and timers, not the Context.
#include <cmath>
#include <cstdlib>
#include <mutex>

#include "fp8gemm/check.h"
#include "fp8gemm/tune.h"
#include "fp8gemm/measure.h"
#include "tune/tuning_selector.h"
#include "tune/cache/warnings.h"

namespace fp8gemm {

const std::string& Decision::choice_for(int64_t m) const {
  for (const ChoiceSegment& s : segments)
    if (m <= s.m_max) return s.tactic;
  return choice;
}

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// ctx's built-in tuning selector (installed if it has none), nullptr when ctx has a custom one.
tuning::TuningSelector* builtin_selector(Context& ctx) {
  install_autotuner(ctx);
  return dynamic_cast<tuning::TuningSelector*>(ctx.selector().get());
}

tuning::TuningSelector& selector_of(Context& ctx) {
  tuning::TuningSelector* sel = builtin_selector(ctx);
  FP8GEMM_REQUIRE(sel, kInvalidArgument,
                  "this Context has a custom selector (set_selector); the tuning API needs the built-in one");
  return *sel;
}

}  // namespace

void install_autotuner(Context& ctx) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (ctx.selector()) return;  // installed already, or the caller chose their own
  tuning::SelectorConfig c;
  c.backends = ctx.backends();
  c.device = ctx.device();
  c.exact_table = decision_tables(c.device.compute_capability()).exact;
  c.selector_rules = decision_tables(c.device.compute_capability()).selector;
  c.make_timer = [&ctx]() -> std::unique_ptr<Timer> { return std::make_unique<GraphTimer>(ctx, tuning_timer_options()); };
  c.lazy = env("FP8GEMM_TUNE") == "1";
  c.cache_path = tuning::startup_cache_path(c.device);  // $FP8GEMM_CACHE, else the conventional file
  auto sel = std::make_shared<tuning::TuningSelector>(std::move(c));
  if (!sel->config().cache_path.empty()) sel->load(sel->config().cache_path);  // never throws for a bad file
  ctx.set_selector(std::move(sel));
}

std::vector<Decision> tune(Context& ctx, const std::vector<Problem>& problems, const TuneOptions& options) {
  return selector_of(ctx).tune(problems, options);  // with the selector's timer (make_timer)
}

CacheTuneRun tune_into_cache(Context& ctx, const std::vector<Problem>& problems, const std::string& path,
                             const TuneOptions& options) {
  FP8GEMM_REQUIRE(!path.empty(), kInvalidArgument, "tune_into_cache: path is empty: name the cache file to write");
  if (const std::string refusal = cache_save_problem(path, &ctx.device()); !refusal.empty())
    FP8GEMM_FAIL(kInvalidArgument, "tune_into_cache: ", path, ": ", refusal);
  CacheTuneRun run;
  run.entries_before = merge_cache(ctx, path);
  run.decisions = tune(ctx, problems, options);
  save_cache(ctx, path);
  return run;
}

std::string explain_choice(Context& ctx, const Problem& p) {
  tuning::TuningSelector* sel = builtin_selector(ctx);
  return sel ? sel->explain(p) : "a custom selector (set_selector) chose";
}

Tactic untuned_choice(Context& ctx, const Problem& p) {
  tuning::TuningSelector* sel = builtin_selector(ctx);
  return sel ? sel->default_for(p) : ctx.choose(p, "auto");
}

std::map<std::string, std::string> failed_keys(Context& ctx) {
  tuning::TuningSelector* sel = builtin_selector(ctx);
  return sel ? sel->failed_keys() : std::map<std::string, std::string>{};
}

void release_tuning_buffers(Context& ctx) {
  if (auto* sel = dynamic_cast<tuning::TuningSelector*>(ctx.selector().get())) sel->release_timer();
}

std::string cache_save_problem(const std::string& path, const DeviceInfo* device) {
  if (!device) return tuning::cache_save_problem(path, nullptr);
  const tuning::Validators here = tuning::Validators::of(*device);
  return tuning::cache_save_problem(path, &here);
}

size_t load_cache(Context& ctx, const std::string& path) {
  tuning::TuningSelector& sel = selector_of(ctx);
  tuning::report_if_missing(path, "given to load_cache");
  return sel.load(path);
}
size_t merge_cache(Context& ctx, const std::string& path) { return selector_of(ctx).merge(path); }
void save_cache(Context& ctx, const std::string& path) { selector_of(ctx).save(path); }
void clear_cache(Context& ctx) { selector_of(ctx).cache().replace({}); }

std::string export_entries(Context& ctx, const std::vector<std::string>& keys) {
  tuning::TuningSelector& sel = selector_of(ctx);
  return tuning::export_cache_text(sel.cache(), tuning::Validators::of(sel.config().device), &keys);
}
std::string export_entries(Context& ctx) {
  tuning::TuningSelector& sel = selector_of(ctx);
  return tuning::export_cache_text(sel.cache(), tuning::Validators::of(sel.config().device), nullptr);
}
ImportReport import_entries(Context& ctx, const std::string& bytes, bool replace_local) {
  tuning::TuningSelector& sel = selector_of(ctx);
  return tuning::import_cache_text(sel.cache(), bytes, tuning::Validators::of(sel.config().device),
                                   sel.config().backends, replace_local);
}
size_t forget_entries(Context& ctx, const std::vector<std::string>& keys) {
  return selector_of(ctx).cache().erase(keys);
}
std::string tune_key(const Problem& p) { return tuning::key_of(p).to_string(); }

AutotuneScope::AutotuneScope(bool enabled, std::string cache_path, Context* ctx)
    : ctx_(ctx ? ctx : &default_context()), enabled_(enabled), cache_path_(std::move(cache_path)) {
  if (!enabled_) return;
  tuning::TuningSelector& sel = selector_of(*ctx_);
  if (!cache_path_.empty()) sel.merge(cache_path_);
  sel.enter_scope();
}

AutotuneScope::~AutotuneScope() {
  if (!enabled_) return;
  try {
    tuning::TuningSelector& sel = selector_of(*ctx_);
    sel.exit_scope();
    if (!cache_path_.empty()) sel.save(cache_path_);
  } catch (const std::exception& e) {
    // A destructor must not throw; a cache that cannot be written is worth a warning only.
    tuning::warn_once("scope-save:" + cache_path_, std::string("AutotuneScope could not save ") + cache_path_ +
                                                     ": " + e.what());
  }
}

}  // namespace fp8gemm
