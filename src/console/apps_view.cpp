#include "console/apps_view.h"

namespace relay::console {

AppsView::AppsView(std::unique_ptr<runtime::Runtime> runtime,
                   std::unique_ptr<app::Registry> registry, Clock& clock,
                   std::chrono::milliseconds max_age, std::function<void()> before_reload)
    : runtime_(std::move(runtime)),
      registry_(std::move(registry)),
      clock_(clock),
      max_age_(max_age),
      before_reload_(std::move(before_reload)),
      loaded_at_(clock.monotonicNow()) {}

std::shared_ptr<const app::Snapshot> AppsView::snapshot() {
  std::lock_guard lock(mutex_);
  if (clock_.monotonicNow() - loaded_at_ >= max_age_) {
    if (before_reload_) before_reload_();
    (void)registry_->reloadAll();
    registry_->refreshAvailability();
    loaded_at_ = clock_.monotonicNow();
  }
  return registry_->snapshot();
}

}  // namespace relay::console
