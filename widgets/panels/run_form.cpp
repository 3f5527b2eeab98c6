#include "run_form.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <cmath>

#include "figure_builder.h"
#include "qcp.h"

namespace lengen::ui {

namespace {

struct SizePreset {
    const char* name;
    int hidden, layers, heads;
};
// The reference's base_model/llama sizes.
const SizePreset kSizes[] = {{"tiny", 256, 2, 4}, {"small", 256, 4, 4}, {"standard", 256, 16, 8},
                             {"large", 512, 16, 8}};

QSpinBox* spin(int lo, int hi)
{
    auto* s = new QSpinBox;
    s->setRange(lo, hi);
    s->setKeyboardTracking(false);
    return s;
}

QDoubleSpinBox* dspin(double lo, double hi, int decimals, double step)
{
    auto* s = new QDoubleSpinBox;
    s->setRange(lo, hi);
    s->setDecimals(decimals);
    s->setSingleStep(step);
    s->setKeyboardTracking(false);
    return s;
}

// A combo with non-selectable group headers ("Regression", "Boolean").
void addGroup(QComboBox* combo, const QString& title)
{
    combo->addItem(title);
    auto* model = qobject_cast<QStandardItemModel*>(combo->model());
    auto* item = model->item(combo->count() - 1);
    item->setFlags(item->flags() & ~(Qt::ItemIsSelectable | Qt::ItemIsEnabled));
    QFont f = item->font();
    f.setBold(true);
    item->setFont(f);
}

QString axisYaml(const engine::CurriculumAxis& a)
{
    return QStringLiteral("{start: %1, end: %2, increment: %3, interval: %4}")
        .arg(a.start).arg(a.end).arg(a.increment).arg(a.interval);
}

}  // namespace

RunForm::RunForm(QWidget* parent) : QWidget(parent)
{
    m_task = new QComboBox;
    addGroup(m_task, tr("Regression (Gaussian inputs)"));
    for (const auto& t : engine::knownTaskNames())
        if (!engine::isBooleanTaskName(t))
            m_task->addItem("  " + QString::fromStdString(t), QString::fromStdString(t));
    addGroup(m_task, tr("Boolean (±1 inputs)"));
    for (const auto& t : engine::knownTaskNames())
        if (engine::isBooleanTaskName(t))
            m_task->addItem("  " + QString::fromStdString(t), QString::fromStdString(t));
    m_backbone = new QComboBox;
    m_backbone->addItem(QStringLiteral("Llama"), QStringLiteral("Llama2"));
    m_backbone->addItem(QStringLiteral("Mamba"), QStringLiteral("Mamba"));
    m_backbone->addItem(QStringLiteral("GPT-2 (learned positions)"), QStringLiteral("GPT2"));
    m_pe = new QComboBox;
    for (const auto& p : engine::knownPositionTypes())
        m_pe->addItem(QString::fromStdString(p), QString::fromStdString(p));
    m_size = new QComboBox;
    for (const auto& s : kSizes)
        m_size->addItem(QStringLiteral("%1 (%2 × %3 × %4)").arg(s.name).arg(s.hidden).arg(s.layers).arg(s.heads));
    m_size->addItem(tr("custom"));
    m_hidden = spin(2, 8192);
    m_layers = spin(1, 128);
    m_heads = spin(1, 128);
    m_state = spin(1, 256);
    m_maxLength = dspin(2, 1e6, 0, 2);
    m_dStart = spin(1, 4096), m_dEnd = spin(1, 4096), m_dInc = spin(0, 4096), m_dInt = spin(1, 10'000'000);
    m_pStart = spin(1, 100000), m_pEnd = spin(1, 100000), m_pInc = spin(0, 100000), m_pInt = spin(1, 10'000'000);
    m_steps = spin(1, 100'000'000);
    m_batch = spin(1, 65536);
    m_lr = dspin(0, 10, 6, 1e-4);
    m_wd = dspin(0, 10, 4, 0.01);
    m_clip = dspin(0, 1000, 2, 0.1);
    m_clip->setSpecialValueText(tr("off"));
    m_warmup = dspin(0, 1, 3, 0.01);
    m_warmupSteps = nullptr;
    m_log = spin(1, 1'000'000);
    m_save = spin(1, 100'000'000);
    m_preview = new QCustomPlot;
    m_preview->setMinimumHeight(170);

    auto* model = new QGroupBox(tr("Model"));
    auto* mf = new QFormLayout(model);
    mf->addRow(tr("Backbone"), m_backbone);
    mf->addRow(tr("Position encoding"), m_pe);
    mf->addRow(tr("Size"), m_size);
    mf->addRow(tr("Hidden"), m_hidden);
    mf->addRow(tr("Layers"), m_layers);
    mf->addRow(tr("Heads"), m_heads);
    mf->addRow(tr("State size (Mamba)"), m_state);
    mf->addRow(tr("max_length (tokens)"), m_maxLength);
    auto* task = new QGroupBox(tr("Task and curriculum"));
    auto* tf = new QFormLayout(task);
    tf->addRow(tr("Task"), m_task);
    auto row = [](std::initializer_list<QWidget*> ws) {
        auto* w = new QWidget;
        auto* h = new QHBoxLayout(w);
        h->setContentsMargins(0, 0, 0, 0);
        for (auto* x : ws)
            h->addWidget(x);
        return w;
    };
    tf->addRow(tr("Dims start/end/+/every"), row({m_dStart, m_dEnd, m_dInc, m_dInt}));
    tf->addRow(tr("Points start/end/+/every"), row({m_pStart, m_pEnd, m_pInc, m_pInt}));
    tf->addRow(m_preview);
    auto* training = new QGroupBox(tr("Training"));
    auto* gf = new QFormLayout(training);
    gf->addRow(tr("Steps"), m_steps);
    gf->addRow(tr("Batch"), m_batch);
    gf->addRow(tr("Learning rate"), m_lr);
    gf->addRow(tr("Warm-up ratio"), m_warmup);
    gf->addRow(tr("Weight decay"), m_wd);
    gf->addRow(tr("Clip grad norm"), m_clip);
    gf->addRow(tr("Log / save every"), row({m_log, m_save}));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(task);
    layout->addWidget(model);
    layout->addWidget(training);
    layout->addStretch();

    m_fields = {{"task.name", m_task}, {"model.family", m_backbone}, {"patch.rope_scaling.type", m_pe},
                {"model.hidden_size", m_hidden}, {"model.n_embd", m_hidden}, {"model.num_hidden_layers", m_layers},
                {"model.n_layer", m_layers}, {"model.num_attention_heads", m_heads}, {"model.n_head", m_heads},
                {"model.state_size", m_state}, {"model.max_length", m_maxLength},
                {"task.curriculum.dims.start", m_dStart}, {"task.curriculum.dims.end", m_dEnd},
                {"task.curriculum.dims.increment", m_dInc}, {"task.curriculum.dims.interval", m_dInt},
                {"task.curriculum.points.start", m_pStart}, {"task.curriculum.points.end", m_pEnd},
                {"task.curriculum.points.increment", m_pInc}, {"task.curriculum.points.interval", m_pInt},
                {"training.max_steps", m_steps}, {"training.per_device_train_batch_size", m_batch},
                {"training.learning_rate", m_lr}, {"training.warmup_ratio", m_warmup},
                {"training.weight_decay", m_wd}, {"training.max_grad_norm", m_clip},
                {"training.logging_steps", m_log}, {"training.save_steps", m_save}};
    for (auto* c : {m_task, m_backbone, m_pe})
        connect(c, &QComboBox::currentIndexChanged, this, &RunForm::onEdited);
    connect(m_size, &QComboBox::activated, this, &RunForm::onSizePreset);
    for (auto* s : findChildren<QSpinBox*>())
        connect(s, &QSpinBox::valueChanged, this, &RunForm::onEdited);
    for (auto* s : findChildren<QDoubleSpinBox*>())
        connect(s, &QDoubleSpinBox::valueChanged, this, &RunForm::onEdited);
}

void RunForm::setConfig(const engine::RunConfig& c)
{
    m_filling = true;
    m_base = c;
    m_task->setCurrentIndex(m_task->findData(QString::fromStdString(c.task.name)));
    m_backbone->setCurrentIndex(m_backbone->findData(QString::fromStdString(c.model.family)));
    m_pe->setCurrentIndex(m_pe->findData(QString::fromStdString(c.position.type)));
    m_hidden->setValue(c.model.hiddenSize);
    m_layers->setValue(c.model.numLayers);
    m_heads->setValue(c.model.numHeads);
    m_state->setValue(c.model.stateSize);
    m_maxLength->setValue(std::isfinite(c.model.maxLength) ? c.model.maxLength : 0);
    const auto& d = c.task.curriculum.dims;
    const auto& p = c.task.curriculum.points;
    for (auto [box, v] : {std::pair{m_dStart, d.start}, {m_dEnd, d.end}, {m_dInc, d.increment}, {m_dInt, d.interval},
                          {m_pStart, p.start}, {m_pEnd, p.end}, {m_pInc, p.increment}, {m_pInt, p.interval}})
        box->setValue(v);
    m_steps->setValue(int(c.training.maxSteps));
    m_batch->setValue(c.training.batchSize);
    m_lr->setValue(c.training.learningRate);
    m_warmup->setValue(c.training.warmupRatio);
    m_wd->setValue(c.training.weightDecay);
    m_clip->setValue(std::max(0.0, c.training.maxGradNorm));
    m_log->setValue(int(c.training.loggingSteps));
    m_save->setValue(int(c.training.saveSteps));
    int size = int(std::size(kSizes));
    for (int i = 0; i < int(std::size(kSizes)); ++i)
        if (kSizes[i].hidden == c.model.hiddenSize && kSizes[i].layers == c.model.numLayers &&
            kSizes[i].heads == c.model.numHeads)
            size = i;
    m_size->setCurrentIndex(size);
    const bool mamba = c.model.backbone == engine::Backbone::Mamba;
    m_pe->setEnabled(c.model.backbone == engine::Backbone::Llama);
    m_heads->setEnabled(!mamba);
    m_state->setEnabled(mamba);
    m_maxLength->setEnabled(!mamba);
    m_filling = false;
    updatePreview();
}

QString RunForm::yaml() const
{
    const QString family = m_backbone->currentData().toString();
    const bool mamba = family == "Mamba", gpt = family == "GPT2";
    const QString task = m_task->currentData().toString();
    QString y = QStringLiteral("# Written by LenGen Studio's run form.\nmodel:\n");
    y += QStringLiteral("  type: %1\n  family: %2\n").arg(mamba ? "ssm" : "decoder", family);
    y += mamba ? QStringLiteral("  max_length: [\"inf\"]\n")
               : QStringLiteral("  max_length: [%1]\n").arg(m_maxLength->value());
    if (gpt)
        y += QStringLiteral("  n_embd: %1\n  n_layer: %2\n  n_head: %3\n")
                 .arg(m_hidden->value()).arg(m_layers->value()).arg(m_heads->value());
    else
        y += QStringLiteral("  hidden_size: %1\n  num_hidden_layers: %2\n").arg(m_hidden->value()).arg(m_layers->value());
    if (mamba)
        y += QStringLiteral("  state_size: %1\n").arg(m_state->value());
    else if (!gpt)
        y += QStringLiteral("  num_attention_heads: %1\n").arg(m_heads->value());
    const QString pe = m_pe->currentData().toString();
    if (!mamba && !gpt && pe != "rope") {
        y += QStringLiteral("patch:\n  name: %1\n  rope_scaling: {type: %1").arg(pe);
        if (m_base.position.explicitScaling && m_base.position.factor && m_base.position.type == pe.toStdString())
            y += ", factor: " + QString::number(*m_base.position.factor, 'g', 17);
        y += QStringLiteral("}\n");
    }
    y += QStringLiteral("task:\n  data: %1\n  name: %2\n  curriculum:\n")
             .arg(engine::isBooleanTaskName(task.toStdString()) ? "boolean" : "gaussian", task);
    engine::CurriculumAxis d{m_dStart->value(), m_dEnd->value(), m_dInc->value(), m_dInt->value()};
    engine::CurriculumAxis p{m_pStart->value(), m_pEnd->value(), m_pInc->value(), m_pInt->value()};
    y += "    dims: " + axisYaml(d) + "\n    points: " + axisYaml(p) + "\n";
    y += QStringLiteral("training:\n  learning_rate: %1\n  weight_decay: %2\n  max_grad_norm: %3\n"
                        "  warmup_ratio: %4\n  max_steps: %5\n  logging_steps: %6\n  save_steps: %7\n"
                        "  per_device_train_batch_size: %8\n  adam_beta1: %9\n  adam_beta2: %10\n"
                        "  adam_epsilon: %11\n")
             .arg(m_lr->value()).arg(m_wd->value()).arg(m_clip->value()).arg(m_warmup->value())
             .arg(m_steps->value()).arg(m_log->value()).arg(m_save->value()).arg(m_batch->value())
             .arg(m_base.training.adamBeta1).arg(m_base.training.adamBeta2).arg(m_base.training.adamEpsilon);
    if (m_base.compat == engine::CompatMode::Reference)
        y += QStringLiteral("compat: reference\n");
    if (m_base.seed)
        y += QStringLiteral("seed: %1\n").arg(*m_base.seed);
    return y;
}

void RunForm::onSizePreset(int index)
{
    if (index < 0 || index >= int(std::size(kSizes)))
        return;
    m_filling = true;
    m_hidden->setValue(kSizes[index].hidden);
    m_layers->setValue(kSizes[index].layers);
    m_heads->setValue(kSizes[index].heads);
    m_filling = false;
    onEdited();
}

void RunForm::onEdited()
{
    if (m_filling)
        return;
    updatePreview();
    Q_EMIT yamlEdited(yaml());
}

int RunForm::showIssues(const std::vector<engine::ConfigIssue>& issues)
{
    for (const auto& [key, w] : m_fields) {
        w->setStyleSheet(QString());
        w->setToolTip(QString());
    }
    int found = 0;
    for (const auto& i : issues)
        if (auto* w = fieldFor(i.keyPath)) {
            w->setStyleSheet(QStringLiteral("background: #FDECEA; border: 1px solid #B00020;"));
            w->setToolTip(QString::fromStdString(i.message));
            ++found;
        }
    return found;
}

QWidget* RunForm::fieldFor(const std::string& keyPath) const
{
    const auto it = m_fields.find(keyPath);
    return it == m_fields.end() ? nullptr : it->second;
}

void RunForm::updatePreview()
{
    // The schedule over training: d_t and N by step.
    plots::FigureSpec f;
    f.x.label = "step";
    f.y.label = "";  // the legend names both curves
    f.legend = plots::LegendPlace::LowerRight;
    f.widthInches = 4;
    f.heightInches = 1.6;
    engine::CurriculumAxis d{m_dStart->value(), m_dEnd->value(), m_dInc->value(), std::max(1, m_dInt->value())};
    engine::CurriculumAxis p{m_pStart->value(), m_pEnd->value(), m_pInc->value(), std::max(1, m_pInt->value())};
    plots::Series sd, sp;
    sd.name = "dims";
    sp.name = "points";
    const int steps = std::max(1, m_steps->value());
    for (int i = 0; i <= 200; ++i) {
        const std::int64_t s = std::int64_t(steps) * i / 200;
        sd.x.push_back(double(s));
        sd.y.push_back(d.valueAt(s));
        sp.x.push_back(double(s));
        sp.y.push_back(p.valueAt(s));
    }
    f.series = {sd, sp};
    plots::buildFigure(*m_preview, f);
}

}  // namespace lengen::ui
