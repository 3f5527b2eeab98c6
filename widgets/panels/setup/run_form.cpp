#include "run_form.h"
#include "refusing_spin_box.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <set>

#include <cmath>

#include "config_draft.h"
#include "field_mark.h"
#include "figure_builder.h"
#include "layout_check.h"
#include "lengen/engine/encodings.h"
#include "qcp.h"

namespace lengen::ui {

namespace {

struct SizePreset {
    const char* name;
    int hidden, layers, heads;
};
// The reference's base_model/llama sizes.
const SizePreset kSizes[] = {
    {"tiny", 256, 2, 4}, {"small", 256, 4, 4}, {"standard", 256, 16, 8}, {"large", 512, 16, 8}};

// Keyboard tracking on: every keystroke is validated, not only on focus loss. What the field
// cannot hold is refused where it was typed, never changed (refusing_spin_box.h).
QSpinBox* spin(int lo, int hi) { return new RefusingSpinBox(lo, hi); }

QDoubleSpinBox* dspin(double lo, double hi, int decimals, double step)
{
    return new RefusingDoubleSpinBox(lo, hi, decimals, step);
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

// The size preset a config's model is (the last item, custom, when it is none of them).
int runFormSizePreset(const engine::RunConfig& c)
{
    int size = int(std::size(kSizes));
    for (int i = 0; i < int(std::size(kSizes)); ++i)
        if (kSizes[i].hidden == c.model.hiddenSize && kSizes[i].layers == c.model.numLayers &&
            kSizes[i].heads == c.model.numHeads)
            size = i;
    return size;
}

}  // namespace

RunForm::RunForm(QWidget* parent) : QWidget(parent)
{
    createFields();
    layOut();
    m_fields = {{"task.name", m_task},
                {"model.family", m_backbone},
                {"patch.rope_scaling.type", m_pe},
                {"model.hidden_size", m_hidden},
                {"model.n_embd", m_hidden},
                {"model.num_hidden_layers", m_layers},
                {"model.n_layer", m_layers},
                {"model.num_attention_heads", m_heads},
                {"model.n_head", m_heads},
                {"model.state_size", m_state},
                {"model.max_length", m_maxLength},
                {"task.curriculum.dims.start", m_dStart},
                {"task.curriculum.dims.end", m_dEnd},
                {"task.curriculum.dims.increment", m_dInc},
                {"task.curriculum.dims.interval", m_dInt},
                {"task.curriculum.points.start", m_pStart},
                {"task.curriculum.points.end", m_pEnd},
                {"task.curriculum.points.increment", m_pInc},
                {"task.curriculum.points.interval", m_pInt},
                {"training.max_steps", m_steps},
                {"training.per_device_train_batch_size", m_batch},
                {"training.learning_rate", m_lr},
                {"training.warmup_ratio", m_warmup},
                {"training.weight_decay", m_wd},
                {"training.max_grad_norm", m_clip},
                {"training.logging_steps", m_log},
                {"training.save_steps", m_save},
                {"training.random_positions.max_position", m_randomPositions}};
    for (auto* c : {m_task, m_backbone, m_pe})
        connect(c, &QComboBox::currentIndexChanged, this, &RunForm::onEdited);
    connect(m_size, &QComboBox::activated, this, &RunForm::onSizePreset);
    for (auto* s : findChildren<QSpinBox*>())
        connect(s, &QSpinBox::valueChanged, this, &RunForm::onEdited);
    for (auto* s : findChildren<QDoubleSpinBox*>())
        connect(s, &QDoubleSpinBox::valueChanged, this, &RunForm::onEdited);
    // A commit (Enter, focus leaving) may refuse or resolve a typed value; the box shows its
    // verdict after the signal, so listeners hear of it once the event is done.
    for (auto* s : findChildren<QAbstractSpinBox*>())
        connect(s, &QAbstractSpinBox::editingFinished, this, &RunForm::refusalsChanged,
                Qt::QueuedConnection);
}

// Every box the form holds, with its range.
void RunForm::createFields()
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
    for (const auto& p : engine::knownPositionTypes())  // named as in papers, data = config name
        m_pe->addItem(QString::fromStdString(peLabel(p)), QString::fromStdString(p));
    m_size = new QComboBox;
    for (const auto& s : kSizes)
        m_size->addItem(QStringLiteral("%1 (%2 × %3 × %4)")
                            .arg(s.name)
                            .arg(s.hidden)
                            .arg(s.layers)
                            .arg(s.heads));
    m_size->addItem(tr("custom"));
    m_hidden = spin(2, 8192);
    m_layers = spin(1, 128);
    m_heads = spin(1, 128);
    m_state = spin(1, 256);
    m_maxLength = dspin(2, 1e6, 0, 2);
    m_dStart = spin(1, 4096), m_dEnd = spin(1, 4096), m_dInc = spin(0, 4096),
    m_dInt = spin(1, 10'000'000);
    m_pStart = spin(1, 100000), m_pEnd = spin(1, 100000), m_pInc = spin(0, 100000),
    m_pInt = spin(1, 10'000'000);
    m_steps = spin(1, 100'000'000);
    m_batch = spin(1, 65536);
    m_lr = dspin(0, 10, 12, 1e-4);  // 3e-7 is a learning rate too
    m_wd = dspin(0, 10, 8, 0.01);
    m_clip = dspin(0, 1000, 2, 0.1);
    m_clip->setSpecialValueText(tr("off"));
    m_warmup = dspin(0, 1, 3, 0.01);
    m_warmupSteps = nullptr;
    m_log = spin(1, 1'000'000);
    m_save = spin(1, 100'000'000);
    m_randomPositions = spin(0, 100'000'000);
    m_randomPositions->setSpecialValueText(tr("off"));
    m_randomPositions->setToolTip(
        tr("Randomized positions (Ruoss et al. 2023): each training step reads its "
           "tokens at a sorted random subset of positions 0…M−1, so that positions "
           "past the training length are seen; evaluation reads 0…T−1. Off: 0."));
    m_preview = new QCustomPlot;
    // A readable panel (the layout check: 103 px of data at 1280 x 800); the form scrolls.
    m_preview->setMinimumHeight(plots::kPlotMinHeight);
}

// The boxes in three groups: task and curriculum, model, training.
void RunForm::layOut()
{
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
    gf->addRow(tr("Random positions up to"), m_randomPositions);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(task);
    layout->addWidget(model);
    layout->addWidget(training);
    layout->addStretch();
}

void RunForm::setConfig(const engine::RunConfig& c)
{
    m_filling = true;
    showModel(c);
    const bool lengthList = showMaxLength(c);
    showCurriculumAndTraining(c);
    m_size->setCurrentIndex(runFormSizePreset(c));
    enableFor(c, lengthList);
    m_filling = false;
    updatePreview();
}

// Selects the item whose data is `data` (no signal when it is shown already).
void RunForm::fillCombo(QComboBox* box, const QString& data)
{
    const int i = box->findData(data);
    if (box->currentIndex() != i)
        box->setCurrentIndex(i);
    m_shown[box] = box->currentIndex();
}

// A value the config now holds that differs from the field's replaces a refusal typed there
// (the editor's text set it): the field shows the config's value, unmarked.
void RunForm::fillSpin(QSpinBox* box, std::int64_t v)
{
    if (box->value() != v) {
        clearRefusal(box);
        box->setValue(int(v));
    }
    m_shown[box] = box->value();
}

// As fillSpin, for a decimal field.
void RunForm::fillDoubleSpin(QDoubleSpinBox* box, double v)
{
    if (box->value() != v) {
        clearRefusal(box);
        box->setValue(v);
    }
    m_shown[box] = box->value();
}

// The task, the backbone, the position encoding and the model's sizes.
void RunForm::showModel(const engine::RunConfig& c)
{
    using engine::Backbone;
    fillCombo(m_task, QString::fromStdString(c.task.name));
    // By backbone, not by spelling: the loader also accepts "llama", "gpt2", ….
    fillCombo(m_backbone, c.model.backbone == Backbone::Mamba  ? QStringLiteral("Mamba")
                          : c.model.backbone == Backbone::Gpt2 ? QStringLiteral("GPT2")
                                                               : QStringLiteral("Llama2"));
    fillCombo(m_pe, QString::fromStdString(c.position.type));
    fillSpin(m_hidden, c.model.hiddenSize);
    fillSpin(m_layers, c.model.numLayers);
    fillSpin(m_heads, c.model.numHeads);
    fillSpin(m_state, c.model.stateSize);
}

// model.max_length; whether the config holds a list of them.
bool RunForm::showMaxLength(const engine::RunConfig& c)
{
    // A max_length list is one run per value: the field cannot show it, and writing one value
    // back would silently drop the other runs, so it shows the list and is left to the YAML.
    const bool lengthList = c.model.maxLengths.size() > 1;
    QStringList lengths;
    for (double v : c.model.maxLengths)
        lengths << QString::number(v);
    m_maxLength->setSpecialValueText(lengthList ? "[" + lengths.join(", ") + "]" : QString());
    m_maxLength->setToolTip(
        lengthList ? tr("%n runs, one per value of this list; edit the list in the YAML", nullptr,
                        int(lengths.size()))
                   : QString());
    fillDoubleSpin(m_maxLength, lengthList                         ? m_maxLength->minimum()
                                : std::isfinite(c.model.maxLength) ? c.model.maxLength
                                                                   : 0);
    return lengthList;
}

// The curriculum's dims and points, and the training options.
void RunForm::showCurriculumAndTraining(const engine::RunConfig& c)
{
    const auto& d = c.task.curriculum.dims;
    const auto& p = c.task.curriculum.points;
    for (auto [box, v] : {std::pair{m_dStart, d.start},
                          {m_dEnd, d.end},
                          {m_dInc, d.increment},
                          {m_dInt, d.interval},
                          {m_pStart, p.start},
                          {m_pEnd, p.end},
                          {m_pInc, p.increment},
                          {m_pInt, p.interval}})
        fillSpin(box, v);
    fillSpin(m_steps, c.training.maxSteps);
    fillSpin(m_batch, c.training.batchSize);
    fillDoubleSpin(m_lr, c.training.learningRate);
    fillDoubleSpin(m_warmup, c.training.warmupRatio);
    fillDoubleSpin(m_wd, c.training.weightDecay);
    fillDoubleSpin(m_clip, std::max(0.0, c.training.maxGradNorm));
    fillSpin(m_log, c.training.loggingSteps);
    fillSpin(m_save, c.training.saveSteps);
    fillSpin(m_randomPositions, c.training.randomPositions);
}

// The fields the config's backbone and encoding have a use for (a max_length list is the
// YAML's).
void RunForm::enableFor(const engine::RunConfig& c, bool lengthList)
{
    using engine::Backbone;
    const bool mamba = c.model.backbone == Backbone::Mamba;
    m_pe->setEnabled(c.model.backbone == Backbone::Llama);
    m_heads->setEnabled(!mamba);
    m_state->setEnabled(mamba);
    m_maxLength->setEnabled(!mamba && !lengthList);
    // Only for encodings that read positions (on while set, so that it can be turned off).
    m_randomPositions->setEnabled(engine::encodingOf(c).readsPositions ||
                                  c.training.randomPositions > 0);
}

bool RunForm::touched(QWidget* field) const
{
    const auto it = m_shown.find(field);
    if (it == m_shown.end())
        return true;
    if (auto* combo = qobject_cast<QComboBox*>(field))
        return std::get<int>(it->second) != combo->currentIndex();
    if (auto* box = qobject_cast<QSpinBox*>(field))
        return std::get<int>(it->second) != box->value();
    if (auto* box = qobject_cast<QDoubleSpinBox*>(field))
        return std::get<double>(it->second) != box->value();
    return false;
}

void RunForm::applyTo(engine::RunConfig& c) const
{
    using engine::Backbone;
    if (touched(m_task))
        setTask(c, m_task->currentData().toString().toStdString());
    const bool backboneChanged = touched(m_backbone);
    if (backboneChanged) {
        const QString f = m_backbone->currentData().toString();
        setBackbone(c, f == "Mamba"  ? Backbone::Mamba
                       : f == "GPT2" ? Backbone::Gpt2
                                     : Backbone::Llama);
    }
    const bool mamba = c.model.backbone == Backbone::Mamba;
    if (touched(m_pe) && c.model.backbone == Backbone::Llama)
        setPositionEncoding(c, m_pe->currentData().toString().toStdString());
    auto take = [this](QSpinBox* box, auto& field) {
        if (touched(box))
            field = box->value();
    };
    take(m_hidden, c.model.hiddenSize);
    take(m_layers, c.model.numLayers);
    if (mamba)
        take(m_state, c.model.stateSize);
    else
        take(m_heads, c.model.numHeads);
    // A backbone switch sets its own max_length (the field still shows the old backbone's).
    if (!backboneChanged && !mamba && c.model.maxLengths.size() <= 1 && touched(m_maxLength)) {
        c.model.maxLength = m_maxLength->value();
        c.model.maxLengths = {c.model.maxLength};
    }
    auto& d = c.task.curriculum.dims;
    auto& p = c.task.curriculum.points;
    for (auto [box, field] : {std::pair{m_dStart, &d.start},
                              {m_dEnd, &d.end},
                              {m_dInc, &d.increment},
                              {m_dInt, &d.interval},
                              {m_pStart, &p.start},
                              {m_pEnd, &p.end},
                              {m_pInc, &p.increment},
                              {m_pInt, &p.interval}})
        take(box, *field);
    auto& t = c.training;
    take(m_steps, t.maxSteps);
    take(m_batch, t.batchSize);
    take(m_log, t.loggingSteps);
    take(m_save, t.saveSteps);
    take(m_randomPositions, t.randomPositions);
    for (auto [box, field] : {std::pair{m_lr, &t.learningRate},
                              {m_warmup, &t.warmupRatio},
                              {m_wd, &t.weightDecay},
                              {m_clip, &t.maxGradNorm}})
        if (touched(box))
            *field = box->value();
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
    Q_EMIT edited();
}

namespace {

const char* kOwnSpecialText = "lengen_special_text";  // a spin box's own "off" and the like

// A field that shows a value the config does not hold (the typed text that was refused) or
// nothing: never the last valid value, which read as if it still applied.
void showNotApplied(QWidget* w, const QString& typed)
{
    const QString text =
        typed.isEmpty() ? RunForm::tr("✗ not applied") : RunForm::tr("%1 ✗ not applied").arg(typed);
    const QSignalBlocker block(w);
    if (auto* spin = qobject_cast<QAbstractSpinBox*>(w)) {
        if (!spin->property(kOwnSpecialText).isValid())
            spin->setProperty(kOwnSpecialText, spin->specialValueText());
        spin->setSpecialValueText(text);  // shown while the value is the minimum
        if (auto* i = qobject_cast<QSpinBox*>(w))
            i->setValue(i->minimum());
        else if (auto* d = qobject_cast<QDoubleSpinBox*>(w))
            d->setValue(d->minimum());
    } else if (auto* combo = qobject_cast<QComboBox*>(w)) {
        combo->setPlaceholderText(text);
        combo->setCurrentIndex(-1);
    }
}

void clearNotApplied(QWidget* w)
{
    auto* spin = qobject_cast<QAbstractSpinBox*>(w);
    if (spin && spin->property(kOwnSpecialText).isValid()) {
        spin->setSpecialValueText(spin->property(kOwnSpecialText).toString());
        spin->setProperty(kOwnSpecialText, QVariant());
    }
}

}  // namespace

int RunForm::showIssues(const std::vector<engine::ConfigIssue>& issues,
                        const std::map<std::string, QString>& typed)
{
    for (const auto& [key, w] : m_fields) {
        if (w->property("lengenRefusing").toBool() || w->property("lengenTyping").toBool())
            continue;  // a value refused where it was typed stays shown so (refusing_spin_box.h)
        markRefused(w, false);
        w->setToolTip(QString());
        clearNotApplied(w);
    }
    int found = 0;
    for (const auto& i : issues)
        if (auto* w = fieldFor(i.keyPath)) {
            markRefused(w, true);
            w->setToolTip(QString::fromStdString(i.message));
            const auto t = typed.find(i.keyPath);
            showNotApplied(w, t == typed.end() ? QString() : t->second);
            ++found;
        }
    return found;
}

QStringList RunForm::refusedFields() const
{
    QStringList out;
    std::set<const QWidget*> seen;  // model.hidden_size and model.n_embd share a field
    for (const auto& [key, w] : m_fields)
        if (const QString typed = refusedText(w); !typed.isEmpty() && seen.insert(w).second)
            out << tr("%1 “%2”").arg(QString::fromStdString(key), typed);
    return out;
}

void RunForm::clearRefusals()
{
    for (const auto& [key, w] : m_fields)
        clearRefusal(w);
}

bool RunForm::showsNotApplied(const std::string& keyPath) const
{
    const auto* w = fieldFor(keyPath);
    if (const auto* spin = qobject_cast<const QAbstractSpinBox*>(w))
        return spin->property(kOwnSpecialText).isValid() &&
               spin->text() == spin->specialValueText();
    if (const auto* combo = qobject_cast<const QComboBox*>(w))
        return combo->currentIndex() < 0;
    return false;
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
    // A refused Steps leaves the last applied one drawn: the axis says so (the Xvfb pass, N6).
    f.x.label = m_stepsRefused.isEmpty()
                    ? std::string("step")
                    : tr("step (Steps “%1” not applied)").arg(m_stepsRefused).toStdString();
    f.y.label = "";  // the legend names both curves
    // Beside the plot: inside, any corner covered a line (lower right the dims line, issue 70,
    // defect 16; upper left the points' first stage, seen under Xvfb).
    f.legend = plots::LegendPlace::OutsideRight;
    f.widthInches = 4;
    f.heightInches = 1.6;
    engine::CurriculumAxis d{m_dStart->value(), m_dEnd->value(), m_dInc->value(),
                             std::max(1, m_dInt->value())};
    engine::CurriculumAxis p{m_pStart->value(), m_pEnd->value(), m_pInc->value(),
                             std::max(1, m_pInt->value())};
    plots::Series sd, sp;
    sd.name = "dims";
    sp.name = "points";
    // Over the steps Train will run (the Steps box's override, else max_steps), to the last
    // step trained: where the curves end is what the run reaches (issue 52).
    const int steps = std::max(1, m_stepsOverride > 0 ? m_stepsOverride : m_steps->value());
    for (int i = 0; i <= 200; ++i) {
        const std::int64_t s = (std::int64_t(steps) - 1) * i / 200;
        sd.x.push_back(double(s));
        sd.y.push_back(d.valueAt(s));
        sp.x.push_back(double(s));
        sp.y.push_back(p.valueAt(s));
    }
    m_previewEnd = {steps - 1, d.valueAt(steps - 1), p.valueAt(steps - 1)};
    // A curve that stops short of its end says where it stops, dims as points (issue 80,
    // defect 13: only the points said so).
    const auto endsAt = [](const char* what, int reached, int end) {
        return QStringLiteral("%1 (ends at %2 of %3)")
            .arg(what)
            .arg(reached)
            .arg(end)
            .toStdString();
    };
    if (m_previewEnd.points < p.end)
        sp.name = endsAt("points", m_previewEnd.points, p.end);
    if (m_previewEnd.dims < d.end)
        sd.name = endsAt("dims", m_previewEnd.dims, d.end);
    f.series = {sd, sp};
    plots::buildFigure(*m_preview, f);
}

void RunForm::setStepsOverride(int steps, const QString& refused)
{
    if (steps == m_stepsOverride && refused == m_stepsRefused)
        return;
    m_stepsOverride = steps;
    m_stepsRefused = refused;
    updatePreview();
}

QString RunForm::previewAxisLabel() const { return m_preview->xAxis->label(); }

}  // namespace lengen::ui
