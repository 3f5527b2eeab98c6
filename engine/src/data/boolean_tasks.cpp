// Boolean function classes (reference §1.2). Inputs uniform in {-1, +1}^D (all D coordinates,
// the dimension curriculum does not apply), labels exactly +-1. Planting overwrites, per point
// with a fixed probability, the literal coordinates so that the point gets a chosen label.

#include "data/tasks.h"

namespace lengen::engine::data {
namespace {

/// Signed literal weights [B, D]: 0 w.p. pZero, +1 and -1 w.p. (1 - pZero) / 2 each.
torch::Tensor signedLiterals(TaskShape s, double pZero, at::Generator& gen)
{
    auto u = torch::rand({s.batch, s.dims}, gen, kFloat);
    const double half = (1.0 - pZero) / 2.0;
    return u.lt(half).to(torch::kFloat32) - (u.ge(half) & u.lt(2 * half)).to(torch::kFloat32);
}

/// xs [B, N, D]: on points chosen w.p. p (per row and point), set the coordinates where
/// `literals` [B, D] is non-zero to `value` [B, D] (e.g. w to satisfy, -w to falsify).
torch::Tensor plant(torch::Tensor xs, const torch::Tensor& literals, const torch::Tensor& value,
                    double p, at::Generator& gen)
{
    auto chosen = torch::rand({xs.size(0), xs.size(1), 1}, gen, kFloat).lt(p);  // [B, N, 1]
    auto where = chosen & literals.ne(0).unsqueeze(1);                          // [B, N, D]
    return torch::where(where, value.unsqueeze(1).expand_as(xs), xs);
}

/// <x, w> for every point: xs [B, N, D] x w [B, D] -> [B, N].
torch::Tensor innerProduct(const torch::Tensor& xs, const torch::Tensor& w)
{
    return torch::matmul(xs, w.to(xs.device()).unsqueeze(-1)).squeeze(-1);
}

class BooleanBatch : public FunctionBatch {
public:
    explicit BooleanBatch(TaskShape shape) : m_shape(shape) {}
    torch::Tensor sampleXs(std::int64_t n, std::int64_t /*dt*/, at::Generator& gen) override
    {
        return plantInto(booleanXs(m_shape, n, gen), gen);
    }

protected:
    virtual torch::Tensor plantInto(torch::Tensor xs, at::Generator&) { return xs; }
    TaskShape m_shape;
};

/// Conjunction (AND of literals) and disjunction (OR), also sparse disjunction (4 positive
/// literals). y = sign(<x,w> - (m-1)) for AND, sign(<x,w> + (m-1)) for OR, m = ||w||_1.
class Junction final : public BooleanBatch {
public:
    enum class Kind { And, Or, SparseOr };
    Junction(TaskShape shape, Kind kind, at::Generator& gen) : BooleanBatch(shape), m_kind(kind)
    {
        m_w = kind == Kind::SparseOr ? randomSubsetMask(shape, 4, gen)
                                     : signedLiterals(shape, 0.70, gen);
        m_offset = m_w.abs().sum(1, true) - 1;  // [B, 1]
    }
    torch::Tensor evaluate(const torch::Tensor& xs) const override
    {
        const auto k = m_offset.to(xs.device());
        return m_kind == Kind::And ? (innerProduct(xs, m_w) - k).sign()
                                   : (innerProduct(xs, m_w) + k).sign();
    }
    std::map<std::string, torch::Tensor> parameters() const override { return {{"w", m_w}}; }

private:
    torch::Tensor plantInto(torch::Tensor xs, at::Generator& gen) override
    {
        // AND: plant satisfied points (positive); OR: plant falsified points (negative).
        return plant(xs, m_w, m_kind == Kind::And ? m_w : -m_w, 0.30, gen);
    }
    Kind m_kind;
    torch::Tensor m_w, m_offset;
};

/// y = sign(<x, w> - threshold) with per-row w and threshold: majority (w in {0,1}, P(1)=.3,
/// threshold .5), int_halfspace (w in {-3..3}, .5), sparse_thres (w in {0,+-1}, .7/.15/.15,
/// threshold u + .5 with u uniform in {-3..2}).
class Threshold final : public BooleanBatch {
public:
    enum class Kind { Majority, IntHalfspace, SparseThreshold };
    Threshold(TaskShape shape, Kind kind, at::Generator& gen) : BooleanBatch(shape)
    {
        if (kind == Kind::Majority) {
            m_w = torch::rand({shape.batch, shape.dims}, gen, kFloat).lt(0.3).to(torch::kFloat32);
            m_threshold = torch::full({shape.batch, 1}, 0.5, kFloat);
        } else if (kind == Kind::IntHalfspace) {
            m_w = torch::randint(-3, 4, {shape.batch, shape.dims}, gen, kFloat);
            m_threshold = torch::full({shape.batch, 1}, 0.5, kFloat);
        } else {
            m_w = signedLiterals(shape, 0.70, gen);
            m_threshold = torch::randint(-3, 3, {shape.batch, 1}, gen, kFloat) + 0.5;
        }
    }
    torch::Tensor evaluate(const torch::Tensor& xs) const override
    {
        return (innerProduct(xs, m_w) - m_threshold.to(xs.device())).sign();
    }
    std::map<std::string, torch::Tensor> parameters() const override
    {
        return {{"w", m_w}, {"threshold", m_threshold}};
    }

private:
    torch::Tensor m_w, m_threshold;
};

/// Parity of a subset: y = +1 iff an odd number of the selected coordinates are +1. The full
/// parity draws each coordinate with probability 1/2 (uniform over all 2^D subsets, without
/// enumerating them); sparse parity selects exactly 2 coordinates.
class Parity final : public BooleanBatch {
public:
    Parity(TaskShape shape, bool sparse, at::Generator& gen) : BooleanBatch(shape)
    {
        m_w = sparse
                  ? randomSubsetMask(shape, 2, gen)
                  : torch::rand({shape.batch, shape.dims}, gen, kFloat).lt(0.5).to(torch::kFloat32);
    }
    torch::Tensor evaluate(const torch::Tensor& xs) const override
    {
        auto ones = innerProduct((xs + 1) * 0.5, m_w);  // count of selected +1 coordinates, exact
        return torch::fmod(ones, 2.0) * 2 - 1;
    }
    std::map<std::string, torch::Tensor> parameters() const override { return {{"w", m_w}}; }

private:
    torch::Tensor m_w;
};

/// 3-term DNF (OR of 3 conjunctions) and 3-clause CNF (AND of 3 disjunctions); literal
/// probabilities .8/.1/.1. Planting picks one term/clause per row and, per point, makes it
/// true (DNF, p .35 -> positive) or false (CNF, p .30 -> negative).
class NormalForm final : public BooleanBatch {
public:
    static constexpr int kTerms = 3;
    NormalForm(TaskShape shape, bool dnf, at::Generator& gen) : BooleanBatch(shape), m_dnf(dnf)
    {
        for (int j = 0; j < kTerms; ++j)
            m_w.push_back(signedLiterals(shape, 0.80, gen));
        auto stacked = torch::stack(m_w, 1);  // [B, 3, D]
        m_offset = stacked.abs().sum(2) - 1;  // [B, 3]
        m_chosen = torch::randint(0, kTerms, {shape.batch}, gen,
                                  torch::TensorOptions().dtype(torch::kLong));
    }
    torch::Tensor evaluate(const torch::Tensor& xs) const override
    {
        std::vector<torch::Tensor> parts;
        const auto k = m_offset.to(xs.device());
        for (int j = 0; j < kTerms; ++j) {
            auto s = innerProduct(xs, m_w[j]);
            auto kj = k.select(1, j).unsqueeze(1);
            parts.push_back(m_dnf ? (s - kj).sign() : (s + kj).sign());
        }
        auto all = torch::stack(parts, 0);  // [3, B, N]
        return m_dnf ? std::get<0>(all.max(0)) : std::get<0>(all.min(0));
    }
    std::map<std::string, torch::Tensor> parameters() const override
    {
        return {{"w", torch::stack(m_w, 1)}, {"chosen", m_chosen}};  // w: [B, 3, D]
    }

private:
    torch::Tensor plantInto(torch::Tensor xs, at::Generator& gen) override
    {
        auto stacked = torch::stack(m_w, 1);  // [B, 3, D]
        auto idx = m_chosen.view({-1, 1, 1}).expand({stacked.size(0), 1, stacked.size(2)});
        auto w = stacked.gather(1, idx).squeeze(1);  // [B, D]
        return plant(xs, w, m_dnf ? w : -w, m_dnf ? 0.35 : 0.30, gen);
    }
    bool m_dnf;
    std::vector<torch::Tensor> m_w;
    torch::Tensor m_offset, m_chosen;
};

}  // namespace

std::unique_ptr<FunctionBatch> makeBooleanBatch(const std::string& name, TaskShape shape,
                                                at::Generator& gen)
{
    using J = Junction::Kind;
    using T = Threshold::Kind;
    if (name == "conjunction")
        return std::make_unique<Junction>(shape, J::And, gen);
    if (name == "disjunction")
        return std::make_unique<Junction>(shape, J::Or, gen);
    if (name == "sparse_disjunction")
        return std::make_unique<Junction>(shape, J::SparseOr, gen);
    if (name == "majority")
        return std::make_unique<Threshold>(shape, T::Majority, gen);
    if (name == "int_halfspace")
        return std::make_unique<Threshold>(shape, T::IntHalfspace, gen);
    if (name == "sparse_thres")
        return std::make_unique<Threshold>(shape, T::SparseThreshold, gen);
    if (name == "parity")
        return std::make_unique<Parity>(shape, false, gen);
    if (name == "sparse_parity")
        return std::make_unique<Parity>(shape, true, gen);
    if (name == "dnf")
        return std::make_unique<NormalForm>(shape, true, gen);
    if (name == "cnf")
        return std::make_unique<NormalForm>(shape, false, gen);
    return nullptr;
}

}  // namespace lengen::engine::data
