#include "train/member_loop.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "lengen/engine/errors.h"
#include "model/member_model.h"
#include "train/graph_step.h"

namespace lengen::engine::training {

namespace {
using Clock = std::chrono::steady_clock;

// One member while it trains.
struct Live {
    MemberSlot slot;
    size_t index = 0;  // into the results
    std::int64_t lastCheckpoint = 0;
    std::unique_ptr<StopRequestWatch> watch;  // `lengen stop RUN` stops this member alone
    /// The next step's prompts xs [B, N, D], ys [B, N], drawn while the device computed
    /// (SessionSwitches::prefetchBatch; its session's genBeforeAhead is set meanwhile).
    std::optional<std::pair<torch::Tensor, torch::Tensor>> ahead;
};

// The stack of the members still training and its optimiser; rebuilt when one leaves. The
// members' own parameters and AdamW moments are views into it, so their checkpoints read the
// current values.
struct Stack {
    std::unique_ptr<model::MemberModel> model;
    std::unique_ptr<AdamW> optimizer;
    // On a GPU, the step as one CUDA graph (graph_step.h): eager, the members' step is bound
    // by kernel launches as a solo step is (48 against 491 steps/s at the quick size, H200).
    std::unique_ptr<StepGraph> graph;
    torch::Tensor xs, ys;             // the graph's inputs [K*B, N, D], [K*B, N]
    torch::Tensor pred, loss, norms;  // its outputs [K*B, N], [K], [K] (norms: when clipping)

    // Frees it all, the graph's inputs and outputs before the graph (their memory is the
    // graph's pool); a move assignment would free the graph first.
    void release()
    {
        xs = ys = pred = loss = norms = torch::Tensor();
        graph.reset();
        optimizer.reset();
        model.reset();
    }
};

Stack buildStack(const std::vector<Live>& live)
{
    const TrainSession& first = *live.front().slot.session;
    std::vector<model::InContextModel> models;
    for (const auto& l : live)
        models.push_back(l.slot.session->model);
    Stack st;
    st.model = std::make_unique<model::MemberModel>(first.config, models);
    st.optimizer = std::make_unique<AdamW>(st.model->params(), adamwOptions(first.config));
    torch::NoGradGuard noGrad;
    for (size_t i = 0; i < st.model->params().size(); ++i) {
        std::vector<torch::Tensor> m, v;
        for (const auto& l : live) {
            m.push_back(l.slot.session->optimizer->expAvg()[i]);
            v.push_back(l.slot.session->optimizer->expAvgSq()[i]);
        }
        st.optimizer->expAvg()[i] = torch::stack(m);  // [K, ...]
        st.optimizer->expAvgSq()[i] = torch::stack(v);
        for (size_t k = 0; k < live.size(); ++k) {
            const auto member = static_cast<std::int64_t>(k);
            live[k].slot.session->optimizer->expAvg()[i] =
                st.optimizer->expAvg()[i].select(0, member);
            live[k].slot.session->optimizer->expAvgSq()[i] =
                st.optimizer->expAvgSq()[i].select(0, member);
        }
    }
    st.optimizer->setStepCount(first.optimizer->stepCount());
    if (graphsApply(first) && st.optimizer->deviceFused())
        st.graph = std::make_unique<StepGraph>(first.device);
    return st;
}

class MemberTrainer {
public:
    MemberTrainer(std::vector<MemberSlot> members, RunControl& all) : m_all(all)
    {
        m_results.resize(members.size());
        for (size_t i = 0; i < members.size(); ++i) {
            MemberSlot slot = members[i];
            if (!slot.control) {
                m_ownControls.push_back(std::make_unique<RunControl>());
                slot.control = m_ownControls.back().get();
            }
            if (!slot.observer)
                slot.observer = &m_silent;
            TrainSession& s = *slot.session;
            m_results[i].summary.runFile = s.writer->path();
            m_results[i].summary.finalLoss = s.writer->lastLoggedLoss();
            if (s.stepsDone != members.front().session->stepsDone)
                throw Error(ErrorKind::Usage,
                            "members start at different steps (" + std::to_string(s.stepsDone) +
                                " and " + std::to_string(members.front().session->stepsDone) +
                                "); resume them one by one");
            Live l;
            l.slot = slot;
            l.index = i;
            l.lastCheckpoint = s.stepsDone;
            l.watch = std::make_unique<StopRequestWatch>(*slot.control, s.writer->path());
            m_live.push_back(std::move(l));
        }
    }

    std::vector<MemberResult> run()
    {
        try {
            loop();
        } catch (...) {
            for (auto& l : m_live)  // a member that left already let its writer go
                if (l.slot.session->writer)
                    l.slot.session->writer->setStatusNoThrow("failed");
            throw;
        }
        return std::move(m_results);
    }

private:
    double wall(const TrainSession& s) const
    {
        return s.wallOffset + std::chrono::duration<double>(Clock::now() - m_start).count();
    }
    void loop();
    void step(std::int64_t step);
    std::pair<torch::Tensor, torch::Tensor> stepPrompts(int nDims, int nPoints);
    std::function<void()> drawAhead(std::int64_t step);
    // The shared step's numbers: pred and ys [K*B, N] on the device, each member's loss and
    // gradient norm before clipping (NaN where not measured).
    struct SharedStep {
        torch::Tensor pred, ys;
        std::vector<double> loss, norms;
    };
    /// Forward, backward, per-member clipping and the update, on xs [K*B, N, D], ys [K*B, N].
    /// `meanwhile` (when set) runs once the step is queued, before its losses are read back.
    SharedStep compute(const torch::Tensor& xs, const torch::Tensor& ys, double lr, double maxNorm,
                       bool logs, const std::function<void()>& meanwhile);
    torch::Tensor memberLosses(const torch::Tensor& xs, const torch::Tensor& ys,
                               torch::Tensor& pred);
    void leave(Live& l, RunOutcome outcome);
    void fail(Live& l, const std::string& why);
    static void release(TrainSession& s);
    void tell(const Live& l) const;  // the member's onLeft
    // Members that left during a step go now; the stack is rebuilt without them.
    void dropLeft();

    RunControl& m_all;
    TrainObserver m_silent;
    std::vector<std::unique_ptr<RunControl>> m_ownControls;
    std::vector<Live> m_live;
    std::vector<bool> m_left;               // per live member, during a step
    std::vector<TrainSession*> m_released;  // failed this step: released in dropLeft
    std::vector<MemberResult> m_results;
    Stack m_stack;
    Clock::time_point m_start = Clock::now();
    StepRate m_rate;
};

void MemberTrainer::leave(Live& l, RunOutcome outcome)
{
    TrainSession& s = *l.slot.session;
    try {
        // As one run: always a checkpoint of the final (or stopped) state.
        if (l.lastCheckpoint != s.stepsDone || s.stepsDone == 0 ||
            outcome == RunOutcome::Finished) {
            writeCheckpointOrExplain(s, wall(s), l.lastCheckpoint);
            l.slot.observer->onCheckpoint(s.stepsDone);
        }
        s.writer->setStatus(outcome == RunOutcome::Cancelled ? "cancelled" : "finished");
        // The run is let go now, not when the others end: `lengen stop` waits for its writer
        // to leave, and a reader sees no writer holding it.
        s.writer.reset();
        release(s);
    } catch (const Error& e) {
        fail(l, e.what());
        return;
    }
    auto& summary = m_results[l.index].summary;
    summary.outcome = outcome;
    summary.stepsDone = s.stepsDone;
    summary.wallSeconds = wall(s);
    tell(l);
}

void MemberTrainer::tell(const Live& l) const
{
    if (l.slot.onLeft)
        l.slot.onLeft(m_results[l.index]);
}

void MemberTrainer::fail(Live& l, const std::string& why)
{
    if (l.slot.session->writer) {
        l.slot.session->writer->setStatusNoThrow("failed");
        l.slot.session->writer.reset();  // its run is let go (see leave)
    }
    m_released.push_back(l.slot.session);  // its views go once this step's update is done
    m_results[l.index].error = why;
    m_results[l.index].summary.stepsDone = l.lastCheckpoint;
    tell(l);
}

// A member that left holds views into the stack (its weights, its AdamW moments): dropped,
// so that the old stack is freed once the others are stacked again (a GPU's memory).
void MemberTrainer::release(TrainSession& s)
{
    s.model = model::InContextModel(nullptr);
    s.optimizer.reset();
}

void MemberTrainer::dropLeft()
{
    for (auto* s : m_released)
        release(*s);
    m_released.clear();
    std::vector<Live> kept;
    for (size_t k = 0; k < m_live.size(); ++k)
        if (!m_left[k])
            kept.push_back(std::move(m_live[k]));
    const bool changed = kept.size() != m_live.size();
    m_live = std::move(kept);
    if (changed && !m_live.empty()) {
        m_stack.release();  // the members' views keep the values the new stack copies
        m_stack = buildStack(m_live);
    }
}

void MemberTrainer::loop()
{
    const TrainSession& first = *m_live.front().slot.session;
    const std::int64_t total = first.config.training.maxSteps;
    compat::applyMatmulPrecision(first.precision, first.device);
    for (auto& l : m_live) {
        l.slot.session->model->train();
        l.slot.observer->onStarted(l.slot.session->started);
    }
    m_stack = buildStack(m_live);
    std::int64_t step = first.stepsDone;
    for (; step < total && !m_live.empty(); ++step) {
        // Who leaves before this step: everyone (Ctrl-C), or a member asked to stop.
        m_left.assign(m_live.size(), false);
        for (size_t k = 0; k < m_live.size(); ++k)
            if (!m_all.shouldContinue() || !m_live[k].slot.control->shouldContinue()) {
                leave(m_live[k], RunOutcome::Cancelled);
                m_left[k] = true;
            }
        dropLeft();
        if (m_live.empty())
            break;
        this->step(step);
        dropLeft();
    }
    for (auto& l : m_live)
        leave(l, RunOutcome::Finished);
    m_live.clear();
}

// Each member's loss [K] on its rows of the batch; pred [K*B, N] is set.
torch::Tensor MemberTrainer::memberLosses(const torch::Tensor& xs, const torch::Tensor& ys,
                                          torch::Tensor& pred)
{
    const TrainSession& first = *m_live.front().slot.session;
    {
        compat::AutocastScope autocast(first.precision, first.device);  // bf16 only
        pred = m_stack.model->forward(xs, ys);                          // [K*B, N]
    }
    const auto members = static_cast<std::int64_t>(m_live.size());
    const auto b = xs.size(0) / members;
    std::vector<torch::Tensor> losses;
    for (std::int64_t k = 0; k < members; ++k)
        losses.push_back(m_live[size_t(k)].slot.session->sampler->loss(
            pred.slice(0, k * b, (k + 1) * b).to(torch::kFloat32),
            ys.slice(0, k * b, (k + 1) * b)));
    return torch::stack(losses);  // [K]
}

MemberTrainer::SharedStep MemberTrainer::compute(const torch::Tensor& xs, const torch::Tensor& ys,
                                                 double lr, double maxNorm, bool logs,
                                                 const std::function<void()>& meanwhile)
{
    const auto members = static_cast<std::int64_t>(m_live.size());
    const torch::Device device = m_live.front().slot.session->device;
    AdamW& opt = *m_stack.optimizer;
    SharedStep out;
    const auto toHost = [](const torch::Tensor& t) {
        const auto h = t.detach().to(torch::kCPU, torch::kFloat64).contiguous();
        return std::vector<double>(h.data_ptr<double>(), h.data_ptr<double>() + h.numel());
    };
    if (!m_stack.graph) {
        out.ys = ys.to(device);
        // The members' parameters are disjoint: the sum's gradient is each member's own.
        const auto loss = memberLosses(xs.to(device), out.ys, out.pred);
        loss.sum().backward();
        if (meanwhile)  // on a device the backward is queued: the host draws meanwhile
            meanwhile();
        out.loss = toHost(loss);
        out.norms = opt.clipGradNormPerMember(maxNorm, members, logs);
        opt.step(lr);
        opt.zeroGrad();
        return out;
    }
    Stack& st = m_stack;
    const auto fill = [&](bool newShape) {
        if (newShape) {
            st.xs = torch::empty(xs.sizes(), xs.options().device(device));
            st.ys = torch::empty(ys.sizes(), ys.options().device(device));
        }
        st.xs.copy_(xs);
        st.ys.copy_(ys);
    };
    const auto body = [&] {
        st.loss = memberLosses(st.xs, st.ys, st.pred);
        st.loss.sum().backward();
        opt.clipGradNormPerMember(maxNorm, members, false);  // no read-back: capturable
        st.norms = opt.deviceNorm();
        opt.applyStep();
        st.pred = st.pred.detach();
        st.loss = st.loss.detach();
    };
    const auto done = [&] {
        if (meanwhile)  // the replay is queued: the host draws meanwhile
            meanwhile();
        out.loss = toHost(st.loss);
        out.norms = logs && st.norms.defined() ? toHost(st.norms)
                                               : std::vector<double>(size_t(members), std::nan(""));
    };
    st.graph->run(xs.sizes().vec(), opt, lr, fill, body, done);
    out.pred = st.pred;
    out.ys = st.ys;
    return out;
}

// Each member's prompts from its own generator, in the order its solo run draws them, stacked
// [K*B, N, D], [K*B, N]: drawn during the last step (prefetchBatch), else now.
std::pair<torch::Tensor, torch::Tensor> MemberTrainer::stepPrompts(int nDims, int nPoints)
{
    std::vector<torch::Tensor> xsList, ysList;
    for (auto& l : m_live) {
        TrainSession& s = *l.slot.session;
        auto [xs, ys] = l.ahead ? std::move(*l.ahead) : drawPrompts(s, nDims, nPoints);
        l.ahead.reset();
        s.genBeforeAhead = torch::Tensor();  // its generator is this step's own again
        xsList.push_back(xs);
        ysList.push_back(ys);
    }
    return {torch::cat(xsList), torch::cat(ysList)};
}

// With prefetchBatch, what draws every member's next prompts while `step` computes; else none.
std::function<void()> MemberTrainer::drawAhead(std::int64_t step)
{
    const RunConfig& c = m_live.front().slot.session->config;
    if (!m_live.front().slot.session->switches.prefetchBatch || step + 1 >= c.training.maxSteps)
        return {};
    const auto* cur = &c.task.curriculum;  // the first member's session outlives the step
    return [this, cur, step] {
        for (auto& l : m_live) {
            TrainSession& s = *l.slot.session;
            s.genBeforeAhead = s.gen.get_state();  // what a checkpoint after this step saves
            l.ahead = drawPrompts(s, cur->dims.valueAt(step + 1), cur->points.valueAt(step + 1));
        }
    };
}

void MemberTrainer::step(std::int64_t step)
{
    TrainSession& first = *m_live.front().slot.session;
    const RunConfig& c = first.config;
    const auto stepStart = Clock::now();
    const int nDims = c.task.curriculum.dims.valueAt(step);
    const int nPoints = c.task.curriculum.points.valueAt(step);
    const double lr = learningRateAt(c, step);
    const bool logs = step % c.training.loggingSteps == 0;
    const auto [xs, ys] = stepPrompts(nDims, nPoints);
    const auto b = xs.size(0) / std::int64_t(m_live.size());
    const SharedStep out = compute(xs, ys, lr, c.effectiveMaxGradNorm(), logs, drawAhead(step));
    const double* loss = out.loss.data();
    m_left.assign(m_live.size(), false);
    for (size_t k = 0; k < m_live.size(); ++k) {
        Live& l = m_live[k];
        if (!std::isfinite(loss[k])) {
            // It leaves after this step's update, which changes only its own slices.
            fail(l, "the training loss became " + std::to_string(loss[k]) + " at step " +
                        std::to_string(step) + "; the checkpoint at step " +
                        std::to_string(l.lastCheckpoint) +
                        " is kept. Lower the learning rate or enable gradient clipping.");
            m_left[k] = true;
            continue;
        }
        if (!logs)
            continue;
        const auto rows = [&](const torch::Tensor& t) {
            return t.slice(0, std::int64_t(k) * b, std::int64_t(k + 1) * b);
        };
        TrainSession& s = *l.slot.session;
        const LogRecord r = logRecord(
            s,
            {step, loss[k], rows(out.pred), rows(out.ys), nDims, nPoints, lr, out.norms[k], wall(s),
             m_rate.perSecond(std::chrono::duration<double>(Clock::now() - stepStart).count())});
        s.writer->appendLog(r);
        l.slot.observer->onLog(r);
        m_results[l.index].summary.finalLoss = loss[k];
    }
    m_rate.stepEnded(std::chrono::duration<double>(Clock::now() - stepStart).count());
    const std::int64_t total = c.training.maxSteps;
    for (size_t k = 0; k < m_live.size(); ++k) {
        if (m_left[k])
            continue;
        Live& l = m_live[k];
        TrainSession& s = *l.slot.session;
        s.stepsDone = step + 1;
        s.optimizer->setStepCount(m_stack.optimizer->stepCount());
        l.slot.observer->onStep({step, total, loss[k], m_rate.perSecond(0),
                                 m_rate.stepSeconds() * static_cast<double>(total - s.stepsDone)});
        if (s.stepsDone % c.training.saveSteps == 0 && s.stepsDone < total) {
            try {
                writeCheckpointOrExplain(s, wall(s), l.lastCheckpoint);
            } catch (const Error& e) {  // a full disk ends this member, not the others
                fail(l, e.what());
                m_left[k] = true;
                continue;
            }
            l.lastCheckpoint = s.stepsDone;
            l.slot.observer->onCheckpoint(s.stepsDone);
        }
    }
}

}  // namespace

std::vector<MemberResult> runMemberTraining(std::vector<MemberSlot> members, RunControl& all)
{
    if (members.empty())
        return {};
    MemberTrainer trainer(std::move(members), all);
    return trainer.run();
}

}  // namespace lengen::engine::training
