#include "train/train_loop.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "lengen/engine/errors.h"
#include "lengen/engine/run_control.h"
#include "train/graph_step.h"

namespace lengen::engine::training {

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t)
{
    return std::chrono::duration<double>(Clock::now() - t).count();
}

std::vector<double> toVector(const torch::Tensor& t)
{
    auto c = t.to(torch::kCPU, torch::kFloat64).contiguous();
    return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

std::string shapeText(c10::IntArrayRef sizes)
{
    std::string text = "[";
    for (size_t i = 0; i < sizes.size(); ++i)
        text += (i ? ", " : "") + std::to_string(sizes[i]);
    return text + "]";
}
}  // namespace

AdamWOptions adamwOptions(const RunConfig& config)
{
    AdamWOptions opt;
    opt.beta1 = config.training.adamBeta1;
    opt.beta2 = config.training.adamBeta2;
    opt.eps = config.effectiveAdamEpsilon();
    opt.weightDecay = config.effectiveWeightDecay();
    return opt;
}

void setupSession(TrainSession& s, const RunConfig& config, std::uint64_t seed,
                  const std::string& device)
{
    s.config = config;
    s.device = torch::Device(device);
    s.gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    s.model = model::buildModel(config);
    s.model->initialise(s.gen);
    s.model->setDropoutGenerator(s.gen);
    s.model->to(s.device);
    s.model->setKernelPolicy(model::chooseKernelPolicy(s.device.is_cuda(), s.kernels, s.switches));
    std::vector<std::pair<std::string, torch::Tensor>> params;
    for (auto& item : s.model->named_parameters())
        params.emplace_back(item.key(), item.value());
    s.optimizer = std::make_unique<AdamW>(std::move(params), adamwOptions(config));
    s.optimizer->setKernelContext(s.kernels);
    s.sampler = std::make_unique<data::TaskSampler>(
        config.task.name, data::TaskShape{config.training.batchSize, config.inputDims()});
}

std::pair<torch::Tensor, torch::Tensor> forwardLoss(TrainSession& s, const torch::Tensor& xs,
                                                    const torch::Tensor& ys,
                                                    const torch::Tensor& positions)
{
    compat::AutocastScope autocast(s.precision, s.device);  // bf16 only
    model::ForwardOptions options;
    options.positions = positions;
    auto pred = s.model->forward(xs, ys, options).predictions;  // [B, N]
    auto loss = s.sampler->loss(pred.to(torch::kFloat32), ys);
    return {pred, loss};
}

std::pair<torch::Tensor, torch::Tensor> drawPrompts(TrainSession& s, int nDims, int nPoints)
{
    auto functions = s.sampler->sample(s.gen);             // B fresh functions
    auto xs = functions->sampleXs(nPoints, nDims, s.gen);  // [B, N, D]
    auto ys = functions->evaluate(xs);                     // [B, N]
    return {xs, ys};
}

torch::Tensor drawPositions(at::Generator& gen, std::int64_t tokens, std::int64_t range)
{
    if (tokens < 0 || tokens > range)  // the config reader checks max_position against the prompts
        throw Error(ErrorKind::Config, "training.random_positions.max_position " +
                                           std::to_string(range) + " cannot hold a prompt of " +
                                           std::to_string(tokens) + " tokens");
    // Floyd: for j = range - tokens .. range - 1 take t uniform in 0..j; keep t, or j when t is
    // already kept. Every subset of `tokens` positions is equally likely.
    const auto u = torch::rand({tokens}, gen, torch::kFloat64);  // [tokens] in [0, 1)
    const double* draws = u.data_ptr<double>();
    std::set<std::int64_t> kept;
    for (std::int64_t i = 0; i < tokens; ++i) {
        const std::int64_t j = range - tokens + i;
        const auto t =
            std::min<std::int64_t>(static_cast<std::int64_t>(draws[i] * double(j + 1)), j);
        if (!kept.insert(t).second)
            kept.insert(j);
    }
    return torch::tensor(std::vector<std::int64_t>(kept.begin(), kept.end()), torch::kLong);
}

double learningRateAt(const RunConfig& c, std::int64_t k)
{
    const double peak = c.training.learningRate;
    const std::int64_t warm = c.warmupSteps(), total = c.training.maxSteps;
    if (k < warm)
        return peak * static_cast<double>(k) / static_cast<double>(warm);
    if (total <= warm)
        return peak;
    return peak * std::max(0.0, static_cast<double>(total - k) / static_cast<double>(total - warm));
}

double baselineLoss(int nDims, int nPoints)
{
    double sum = 0;
    for (int i = 0; i < nPoints; ++i)
        sum += std::max(nDims - i, 0);
    return sum / std::max(nPoints, 1);
}

io::CheckpointState captureCheckpoint(TrainSession& s, double wallSeconds)
{
    io::CheckpointState st;
    st.stepsDone = s.stepsDone;
    const auto& params = s.optimizer->params();
    for (size_t i = 0; i < params.size(); ++i) {
        st.model.push_back({params[i].first, params[i].second.detach().cpu()});
        st.expAvg.push_back({params[i].first, s.optimizer->expAvg()[i].cpu()});
        st.expAvgSq.push_back({params[i].first, s.optimizer->expAvgSq()[i].cpu()});
    }
    st.optimizerSteps = s.optimizer->stepCount();
    // A batch drawn ahead is the next step's: the checkpoint's generator has not drawn it yet.
    st.rngState = s.genBeforeAhead.defined() ? s.genBeforeAhead.clone() : s.gen.get_state();
    st.dims = s.config.task.curriculum.dims.valueAt(s.stepsDone);
    st.points = s.config.task.curriculum.points.valueAt(s.stepsDone);
    st.reached = s.config.curriculumAfter(s.stepsDone);
    st.wallSeconds = wallSeconds;
    return st;
}

void restoreCheckpoint(TrainSession& s, const io::CheckpointState& st, const std::string& path)
{
    // Everything is checked before anything is copied: a damaged checkpoint must be refused,
    // not broadcast into the parameters (copy_ accepts any broadcastable shape).
    const auto damaged = [&](const std::string& what) {
        return Error(ErrorKind::RunFile, "the checkpoint in " + path + " is damaged: " + what);
    };
    auto byName = [&](const std::vector<io::NamedTensor>& list, const std::string& name,
                      const char* group, const torch::Tensor& like) {
        for (const auto& t : list)
            if (t.name == name) {
                if (t.value.sizes() != like.sizes())
                    throw damaged(std::string(group) + "/" + name + " has shape " +
                                  shapeText(t.value.sizes()) + ", the model's is " +
                                  shapeText(like.sizes()));
                return t.value;
            }
        throw damaged(std::string("it has no tensor ") + group + "/" + name);
    };
    const auto& params = s.optimizer->params();
    std::vector<std::array<torch::Tensor, 3>> values;
    for (const auto& [name, p] : params)
        values.push_back({byName(st.model, name, "model", p),
                          byName(st.expAvg, name, "optimizer/exp_avg", p),
                          byName(st.expAvgSq, name, "optimizer/exp_avg_sq", p)});
    const std::int64_t total = s.config.training.maxSteps;
    if (st.stepsDone > total)
        throw damaged("step " + std::to_string(st.stepsDone) + " is past the run's " +
                      std::to_string(total) + " steps");
    if (st.optimizerSteps > st.stepsDone)
        throw damaged("the optimizer counts more steps than the run");
    torch::NoGradGuard noGrad;
    try {
        s.gen.set_state(st.rngState);
    } catch (const c10::Error&) {
        throw damaged("rng_state is not a valid generator state");
    }
    for (size_t i = 0; i < params.size(); ++i) {
        params[i].second.copy_(values[i][0]);
        s.optimizer->expAvg()[i].copy_(values[i][1]);
        s.optimizer->expAvgSq()[i].copy_(values[i][2]);
    }
    s.optimizer->setStepCount(st.optimizerSteps);
    s.stepsDone = st.stepsDone;
    s.wallOffset = st.wallSeconds;
}

// A checkpoint that cannot be written ends the run with one sentence saying which checkpoint
// survives; HDF5's own message goes to the details.
void writeCheckpointOrExplain(TrainSession& s, double wallSeconds, std::int64_t lastCheckpoint)
{
    try {
        s.writer->writeCheckpoint(captureCheckpoint(s, wallSeconds));
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::Io)
            throw;
        throw Error(ErrorKind::Io,
                    "cannot write the checkpoint at step " + std::to_string(s.stepsDone) + " to " +
                        s.writer->path() + " (disk full?); " +
                        (lastCheckpoint > 0 ? "the checkpoint at step " +
                                                  std::to_string(lastCheckpoint) + " is intact"
                                            : std::string("no earlier checkpoint exists")),
                    std::string(e.what()) + (e.detail().empty() ? "" : "\n" + e.detail()));
    }
}

LogRecord logRecord(TrainSession& s, const LoggedStep& l)
{
    LogRecord r;
    r.step = l.step;
    r.loss = l.loss;
    r.excessLoss = l.loss / baselineLoss(l.nDims, l.nPoints);
    r.pointwise = toVector(s.sampler->metric(l.pred.detach(), l.ys.to(l.pred.device())).mean(0));
    r.nPoints = l.nPoints;
    r.nDims = l.nDims;
    r.learningRate = l.lr;
    r.gradNorm = l.gradNorm;
    r.wallSeconds = l.wallSeconds;
    r.stepsPerSecond = l.stepsPerSecond;
    return r;
}

namespace {

// One step's forward and backward (or the whole graphed step, update included), its loss
// checked, and the gradients' norm before clipping where it is logged.
struct StepOutcome {
    torch::Tensor pred, ys;  // [B, N] each: what the log row's per-position metric reads
    double loss = 0;
    double gradNorm = std::numeric_limits<double>::quiet_NaN();  // NaN where not measured
};

// One step's prompts, drawn from the run's generator in this order: the functions, the xs, the
// positions.
struct Batch {
    torch::Tensor xs, ys;     // [B, N, D], [B, N]
    torch::Tensor positions;  // [tokens] of 0..2N-1 (randomized positions), else undefined
};

Batch drawBatch(TrainSession& s, int nDims, int nPoints)
{
    const RunConfig& c = s.config;
    Batch b;
    std::tie(b.xs, b.ys) = drawPrompts(s, nDims, nPoints);
    // One sorted random subset of 0..M-1 per step, shared by the batch's prompts.
    if (c.training.randomPositions > 0)
        b.positions = drawPositions(s.gen, 2 * std::int64_t(nPoints), c.training.randomPositions);
    return b;
}

// `batch`'s step. `meanwhile` (when set) runs once the step is launched and before its loss is
// read back, after every draw of this step (GPT-2's dropout seed or masks): the next batch's
// draws come where they would at the next step's start.
StepOutcome forwardBackward(TrainSession& s, GraphedStep* graphed, std::int64_t step, Batch batch,
                            double lr, bool logs, std::int64_t lastCheckpoint,
                            const std::function<void()>& meanwhile)
{
    const RunConfig& c = s.config;
    auto xs = std::move(batch.xs);
    StepOutcome out;
    out.ys = std::move(batch.ys);
    const auto positions = batch.positions;
    torch::Tensor graphGradNorm;
    // GPT-2's dropout on a GPU: the step's masks follow from one draw of the run's generator,
    // eager and graphed alike (the capture and each replay read the seed set here).
    const auto seeded = s.model->seedDeviceDropout(s.device);
    if (graphed) {  // the whole step, update included (graph_step.h)
        auto r = graphed->run(xs, out.ys, lr, c.effectiveMaxGradNorm(), meanwhile);
        out.pred = r.pred;
        out.loss = r.loss;
        graphGradNorm = r.gradNorm;
    } else {
        xs = xs.to(s.device);
        out.ys = out.ys.to(s.device);
        auto [p, loss] = forwardLoss(s, xs, out.ys, positions);
        out.pred = p;
        loss.backward();
        if (meanwhile)  // on a device the backward is queued: the host draws meanwhile
            meanwhile();
        out.loss = loss.item<double>();
    }
    if (!std::isfinite(out.loss)) {
        throw Error(ErrorKind::Runtime,
                    "the training loss became " + std::to_string(out.loss) + " at step " +
                        std::to_string(step) + "; the checkpoint at step " +
                        std::to_string(lastCheckpoint) +
                        " is kept. Lower the learning rate or enable gradient clipping.");
    }
    // The gradients' norm before clipping, measured at logged steps (NaN where not measured:
    // the CUDA-graph path with clipping off).
    if (!graphed)
        out.gradNorm = s.optimizer->clipGradNorm(c.effectiveMaxGradNorm(), logs);
    else if (logs && graphGradNorm.defined())
        out.gradNorm = graphGradNorm.item<double>();
    return out;
}

RunSummary trainSteps(TrainSession& s, RunControl& control, TrainObserver& observer)
{
    const RunConfig& c = s.config;
    const auto& cur = c.task.curriculum;
    const std::int64_t total = c.training.maxSteps;
    const auto start = Clock::now();
    auto wall = [&] { return s.wallOffset + secondsSince(start); };
    s.model->train();
    compat::applyMatmulPrecision(s.precision, s.device);
    std::unique_ptr<GraphedStep> graphed;
    if (graphsApply(s))
        graphed = std::make_unique<GraphedStep>(s);
    observer.onStarted(s.started);

    RunSummary summary;
    summary.runFile = s.writer->path();
    std::int64_t lastCheckpoint = s.stepsDone;
    StepRate rate;
    bool cancelled = false;
    // One definition of "final loss": the last log row's, which after a resume that logs
    // nothing is a row of the earlier session (not this session's last step).
    summary.finalLoss = s.writer->lastLoggedLoss();
    std::optional<Batch> ahead;  // the next step's batch, drawn while the device computed
    for (std::int64_t step = s.stepsDone; step < total; ++step) {
        if (!control.shouldContinue()) {
            cancelled = true;
            break;
        }
        const auto stepStart = Clock::now();
        const int nDims = cur.dims.valueAt(step), nPoints = cur.points.valueAt(step);
        const double lr = learningRateAt(c, step);
        const bool logs = step % c.training.loggingSteps == 0;
        // This step's batch: drawn during the last step (prefetchBatch), else now.
        Batch batch = ahead ? std::move(*ahead) : drawBatch(s, nDims, nPoints);
        ahead.reset();
        s.genBeforeAhead = torch::Tensor();  // the generator is this step's own again
        std::function<void()> drawNext;
        if (s.switches.prefetchBatch && step + 1 < total)
            drawNext = [&s, &ahead, &cur, step] {
                s.genBeforeAhead = s.gen.get_state();  // what a checkpoint after this step saves
                ahead = drawBatch(s, cur.dims.valueAt(step + 1), cur.points.valueAt(step + 1));
            };
        const auto o = forwardBackward(s, graphed.get(), step, std::move(batch), lr, logs,
                                       lastCheckpoint, drawNext);
        if (logs) {
            summary.finalLoss = o.loss;
            const LogRecord r =
                logRecord(s, {step, o.loss, o.pred, o.ys, nDims, nPoints, lr, o.gradNorm, wall(),
                              rate.perSecond(secondsSince(stepStart))});
            s.writer->appendLog(r);
            observer.onLog(r);
        }
        if (!graphed) {
            s.optimizer->step(lr);
            s.optimizer->zeroGrad();
        }
        s.stepsDone = step + 1;

        rate.stepEnded(secondsSince(stepStart));
        StepProgress p{step, total, o.loss, rate.perSecond(0),
                       rate.stepSeconds() * static_cast<double>(total - s.stepsDone)};
        observer.onStep(p);
        if (s.stepsDone % c.training.saveSteps == 0 && s.stepsDone < total) {
            writeCheckpointOrExplain(s, wall(), lastCheckpoint);
            lastCheckpoint = s.stepsDone;
            observer.onCheckpoint(s.stepsDone);
        }
    }
    // Always leave a checkpoint of the final (or interrupted) state.
    if (lastCheckpoint != s.stepsDone || s.stepsDone == 0 || !cancelled) {
        writeCheckpointOrExplain(s, wall(), lastCheckpoint);
        observer.onCheckpoint(s.stepsDone);
    }
    summary.outcome = cancelled ? RunOutcome::Cancelled : RunOutcome::Finished;
    summary.stepsDone = s.stepsDone;
    summary.wallSeconds = wall();
    return summary;
}

}  // namespace

RunSummary runTraining(TrainSession& s, RunControl& control, TrainObserver& observer)
{
    // The one place that writes a run's final status, for every way training can end: an
    // exception of any kind (NaN loss, full disk, out of memory) leaves "failed", never a
    // "running" that no process will ever change.
    // `lengen stop RUN` from another process cancels as SIGTERM does (run_control.h).
    const StopRequestWatch stopRequests(control, s.writer->path());
    try {
        RunSummary summary = trainSteps(s, control, observer);
        s.writer->setStatus(summary.outcome == RunOutcome::Cancelled ? "cancelled" : "finished");
        return summary;
    } catch (...) {
        s.writer->setStatusNoThrow("failed");
        throw;
    }
}

}  // namespace lengen::engine::training
