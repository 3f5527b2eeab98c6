#pragma once
// Several runs of one config, differing only in seed, trained in one process as one batched
// model (model/member_model.h; issue 58). Each member keeps its own TrainSession: data stream
// and generator, run file, log, checkpoints, status, stop requests. The step is shared: one
// batched forward and backward, each member's gradients clipped by its own norm, one AdamW
// pass over the stacked parameters (elementwise, so each member's update is its solo update).
// A member that is stopped, or whose loss is not finite, leaves; the others go on.

#include <functional>
#include <string>
#include <vector>

#include "lengen/engine/observer.h"
#include "lengen/engine/run_control.h"
#include "train/train_loop.h"

namespace lengen::engine::training {

/// One member's session (set up, its writer open, restored when resumed), its own stop and
/// its observer.
/// What became of one member: its summary, or why it failed ("" = it did not).
struct MemberResult {
    RunSummary summary;
    std::string error;
};

struct MemberSlot {
    TrainSession* session = nullptr;
    RunControl* control = nullptr;
    TrainObserver* observer = nullptr;
    /// Called once, as the member leaves (its run let go), with what became of it: a sweep
    /// writes the cell's state then, not when the last member ends.
    std::function<void(const MemberResult&)> onLeft;
};

/// Trains every member to its config's max_steps (they start at the same step). `all` stops
/// every member (Ctrl-C); a member's own control stops that member alone. Writes each
/// member's final status, as runTraining does for one run.
std::vector<MemberResult> runMemberTraining(std::vector<MemberSlot> members, RunControl& all);

}  // namespace lengen::engine::training
