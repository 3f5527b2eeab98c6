#include "eval/probe_layouts.h"

#include <numeric>

#include "lengen/engine/errors.h"

namespace lengen::engine::eval {

namespace {

// Appends a block to a layout and records its span under `mark` (if any).
class Builder {
public:
    explicit Builder(std::string name) { m_layout.name = std::move(name); }
    Builder& range(std::int64_t first, std::int64_t count, const std::string& mark = {})
    {
        const auto start = static_cast<std::int64_t>(m_layout.indices.size());
        for (std::int64_t i = 0; i < count; ++i)
            m_layout.indices.push_back(first + i);
        if (!mark.empty())
            m_layout.spans[mark] = {start, start + count};
        return *this;
    }
    Builder& repeat(std::int64_t index, std::int64_t count, const std::string& mark = {})
    {
        const auto start = static_cast<std::int64_t>(m_layout.indices.size());
        m_layout.indices.insert(m_layout.indices.end(), static_cast<size_t>(count), index);
        if (!mark.empty())
            m_layout.spans[mark] = {start, start + count};
        return *this;
    }
    Layout done() { return std::move(m_layout); }

private:
    Layout m_layout;
};

void require(bool ok, const std::string& what)
{
    if (!ok)
        throw Error(ErrorKind::Config, "probe sizes: " + what);
}

}  // namespace

ProbeSizes resolveSizes(std::int64_t points, std::int64_t dims, std::int64_t testLength,
                        std::int64_t instruction, std::int64_t answer, std::int64_t target)
{
    ProbeSizes s;
    s.points = points;
    s.dims = dims;
    s.testLength = testLength;
    s.instruction = instruction > 0 ? instruction : 2 * dims;
    s.answer = answer > 0 ? answer : dims;
    s.target = target > 0 ? target : (dims + 1) / 2;
    const auto n = std::to_string(points);
    require(s.instruction <= points, "the instruction (" + std::to_string(s.instruction) +
                                         " points) must fit in the training prompt (" + n + ")");
    require(s.answer <= points, "the answer block (" + std::to_string(s.answer) +
                                    " points) must fit in the training prompt (" + n + ")");
    require(s.target <= s.answer, "the target (" + std::to_string(s.target) +
                                      " points) must be part of the answer block");
    require(s.testLength >= s.instruction + s.answer + s.target,
            "test_length (" + std::to_string(testLength) +
                ") must hold instruction + answer + target");
    require(s.testLength >= points + s.target, "test_length (" + std::to_string(testLength) +
                                                   ") must exceed the training length + target");
    return s;
}

std::vector<Layout> countSweepLayouts(const ProbeSizes& s, const std::vector<int>& counts)
{
    std::vector<Layout> out;
    for (int c : counts) {
        const std::int64_t kept = std::max<std::int64_t>(s.points - c, 0);
        out.push_back(Builder("c=" + std::to_string(c))
                          .range(0, kept, "prefix")
                          .repeat(s.noiseIndex(), c, "noise")
                          .range(s.points - s.target, s.target, "target")
                          .done());
    }
    return out;
}

std::vector<Layout> instNoiseTargetLayouts(const ProbeSizes& s)
{
    const auto far = s.testLength - s.instruction - s.target;
    std::vector<Layout> out;
    for (const auto& [name, noise] :
         {std::pair<std::string, std::int64_t>{"begin", s.points - s.instruction},
          {"middle", far / 2},
          {"end", far}})
        out.push_back(Builder(name)
                          .range(0, s.instruction, "instruction")
                          .repeat(s.noiseIndex(), noise, "noise")
                          .range(s.points - s.target, s.target, "target")
                          .done());
    return out;
}

std::vector<Layout> instructionPositionLayouts(const ProbeSizes& s)
{
    const auto rest = s.testLength - s.instruction;
    std::vector<Layout> out;
    out.push_back(Builder("all_duplicated").repeat(s.noiseIndex(), s.testLength, "noise").done());
    out.push_back(Builder("begin")
                      .range(0, s.instruction, "instruction")
                      .repeat(s.noiseIndex(), rest)
                      .done());
    out.push_back(Builder("middle")
                      .repeat(s.noiseIndex(), rest / 2)
                      .range(0, s.instruction, "instruction")
                      .repeat(s.noiseIndex(), rest / 2)
                      .done());
    out.push_back(
        Builder("end").repeat(s.noiseIndex(), rest).range(0, s.instruction, "instruction").done());
    return out;
}

std::vector<Layout> serialPositionLayouts(const ProbeSizes& s)
{
    const auto r = s.testLength - s.instruction - s.answer - s.target;
    const auto ans = s.points - s.answer, tar = s.points - s.target;
    std::vector<Layout> out;
    out.push_back(Builder("begin")
                      .range(0, s.instruction, "instruction")
                      .range(ans, s.answer, "answer")
                      .repeat(s.noiseIndex(), r, "noise")
                      .range(tar, s.target, "target")
                      .done());
    out.push_back(Builder("middle")
                      .range(0, s.instruction, "instruction")
                      .repeat(s.noiseIndex(), r / 2)
                      .range(ans, s.answer, "answer")
                      .repeat(s.noiseIndex(), r / 2)
                      .range(tar, s.target, "target")
                      .done());
    out.push_back(Builder("end")
                      .range(0, s.instruction, "instruction")
                      .repeat(s.noiseIndex(), r, "noise")
                      .range(ans, s.answer, "answer")
                      .range(tar, s.target, "target")
                      .done());
    return out;
}

std::vector<AttentionSetting> attentionSettings(std::int64_t trainPoints, std::int64_t longPoints,
                                                const std::vector<int>& extraLengths)
{
    std::vector<AttentionSetting> out{{"train", trainPoints, false},
                                      {"long", longPoints, false},
                                      {"duplicated", 4 * trainPoints, true}};
    for (const int points : extraLengths)
        out.push_back({"points=" + std::to_string(points), points, false});
    return out;
}

}  // namespace lengen::engine::eval
