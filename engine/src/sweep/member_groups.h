#pragma once
// Which cells of a sweep train together as members of one batched model (`sweep run
// --members K`, issue 58): fresh cells of one config, seed apart; and (issue 71) stopped cells
// of one config that stopped at one checkpoint step, resumed together — the same group after
// a `sweep cancel` or Ctrl-C then logs what it would have logged without the stop, bit for bit.
// Members take every step together, so a stopped cell whose config's other stopped cells
// stopped at another step (a SIGKILL while the group wrote its checkpoints) resumes alone.
// sweep_local.cpp groups the cells one child runs, sweep_members.cpp the child's own choice,
// and `sweep status` says who resumes alone and why (sweep_run.h stoppedMembersPlan): all
// from memberStart.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lengen/engine/config.h"
#include "lengen/engine/sweep.h"

namespace lengen::engine::sweep {

/// How a cell would take part in a group of members.
struct MemberStart {
    RunConfig config;  ///< fresh: its config.yaml; stopped: its run's stored config and seed
    std::optional<std::int64_t> step;  ///< the checkpoint a stopped cell resumes (none: fresh)
    std::string precision;             ///< a stopped run's (members share one)
};

/// Cell `name` as a member, or none where it runs alone: trained already, failed or imported,
/// written by a live process, without a seed, an encoding members do not train, or a config
/// or run that cannot be read (its own process then says what is wrong). A run stopped before
/// its first checkpoint is fresh: it starts over.
std::optional<MemberStart> memberStart(const SweepPaths& paths, const std::string& name);

/// Whether two cells can be members of one group: the same run but the seed, and both fresh
/// or both stopped at one step in one precision.
bool oneGroup(const MemberStart& a, const MemberStart& b);

}  // namespace lengen::engine::sweep
