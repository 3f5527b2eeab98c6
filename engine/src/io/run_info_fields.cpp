// The fields of RunFileInfo a listing keeps (run_file.h: RunInfoField), and the root
// attributes read through them. One list: the reader reads an attribute because it is here,
// and the run index stores every entry here, so a field added here reaches `lengen runs`, the
// studio's Runs list and the index without a copy of it anywhere else.

#include <type_traits>

#include "io/run_open.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"

namespace lengen::engine {

const std::vector<RunInfoField>& runInfoFields()
{
    using F = RunFileInfo;
    using R = RunInfoField;
    static const std::vector<RunInfoField> fields{
        {"format_version", &F::formatVersion, R::Required},
        {"engine_version", &F::engineVersion, R::Required},
        {"run_id", &F::runId, R::Required},
        {"created_at", &F::createdAt, R::Required},
        {"seed", &F::seed, R::Required},
        {"task", &F::task, R::Required},
        {"position_encoding", &F::positionEncoding, R::Required},
        {"backbone", &F::backbone, R::Required},
        {"device", &F::device, R::Required},
        {"host", &F::host, R::Optional},            // issue 82 §2's example of a field added
        {"precision", &F::precision, R::Optional},  // runs written before it: fp32
        {"imported_from", &F::importedFrom, R::Optional},
        {"sweep", &F::sweepName, R::Optional},
        {"sweep_cell", &F::sweepCell, R::Optional},
        {"sweep_axes", &F::sweepAxes, R::Optional},
        {"notes", &F::notes, R::Optional},
        {"tags", &F::tags, R::Optional},  // stored joined by commas
        {"total_steps", &F::totalSteps, R::Required},
        {"parameter_count", &F::parameterCount, R::Required},
        {"status", &F::status, R::Summary},
        {"writer", &F::writer, R::Summary},
        {"checkpoint_step", &F::checkpointStep, R::Summary},
        {"log_rows", &F::logRows, R::Summary},
        {"last_loss", &F::lastLoss, R::Summary},
        {"min_loss", &F::minLoss, R::Summary},
        {"mean_steps_per_s", &F::meanStepsPerSecond, R::Summary},
        {"last_wall_s", &F::lastWallSeconds, R::Summary},
        {"last_logged_step", &F::lastLoggedStep, R::Summary},
        {"reached", &F::reached, R::Summary},
    };
    return fields;
}

namespace io {

// Every Required and Optional field from the root attribute of its name (the caller holds the
// HDF5 lock). Error(RunFile) naming the file and the attribute for a Required one missing.
void readInfoAttributes(hid_t f, const std::string& path, RunFileInfo& info)
{
    for (const auto& field : runInfoFields()) {
        if (field.source == RunInfoField::Summary ||
            (field.source == RunInfoField::Optional && !hasAttribute(f, field.key)))
            continue;
        std::visit(
            [&](auto member) {
                auto& value = info.*member;
                using T = std::decay_t<decltype(value)>;
                if constexpr (std::is_same_v<T, std::string>)
                    value = readStringAttribute(f, field.key, path);
                else if constexpr (std::is_same_v<T, std::vector<std::string>>)
                    value = splitTags(readStringAttribute(f, field.key, path));
                else if constexpr (std::is_same_v<T, std::uint64_t>)
                    value = readUIntAttribute(f, field.key, path);
                else if constexpr (std::is_integral_v<T>)
                    value = static_cast<T>(readIntAttribute(f, field.key, path));
                else  // a double or the reached record: summaries, never attributes
                    throw Error(ErrorKind::Internal,
                                std::string("run field ") + field.key + " is not a root attribute");
            },
            field.member);
    }
}

}  // namespace io

}  // namespace lengen::engine
