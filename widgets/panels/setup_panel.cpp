#include "setup_panel.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSplitter>
#include <QSpinBox>
#include <QTextBlock>
#include <QTimer>
#include <QVBoxLayout>

#include <tuple>

#include "lengen/engine/config_text.h"
#include "lengen/engine/errors.h"
#include "run_form.h"

namespace lengen::ui {

SetupPanel::SetupPanel(const QString& configRoot, QWidget* parent) : QWidget(parent)
{
    m_preset = new QComboBox;
    auto* open = new QPushButton(tr("Open…"));
    auto* saveAs = new QPushButton(tr("Save as…"));
    m_editor = new QPlainTextEdit;
    m_editor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_editor->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_issues = new QListWidget;
    m_issues->setMaximumHeight(90);
    m_summary = new QLabel;
    m_summary->setWordWrap(true);
    m_steps = new QSpinBox;
    m_steps->setRange(0, 10'000'000);
    m_steps->setSpecialValueText(tr("as configured"));
    m_seed = new QSpinBox;
    m_seed->setRange(0, 2'000'000'000);
    m_seed->setSpecialValueText(tr("config or random"));
    m_device = new QComboBox;
    m_device->addItem(tr("best available"), QString());
    m_device->addItem(QStringLiteral("cpu"), QStringLiteral("cpu"));
    m_device->addItem(QStringLiteral("cuda"), QStringLiteral("cuda"));
    m_out = new QLineEdit(QStringLiteral("runs"));
    auto* train = new QPushButton(tr("Train"));
    train->setDefault(true);
    train->setToolTip(tr("Start now, or after the runs already queued"));
    auto* sweep = new QPushButton(tr("Sweep position encodings…"));
    sweep->setToolTip(tr("Queue this config once per chosen position encoding (Llama backbone)"));

    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Preset:")));
    top->addWidget(m_preset, 1);
    top->addWidget(open);
    top->addWidget(saveAs);
    // The run overrides on one line: they are set per run, the config holds the rest.
    auto* form = new QHBoxLayout;
    for (auto [label, field, stretch] : {std::tuple<QString, QWidget*, int>{tr("Steps"), m_steps, 1},
                                         {tr("Seed"), m_seed, 1},
                                         {tr("Device"), m_device, 1},
                                         {tr("Output folder"), m_out, 3}}) {
        form->addWidget(new QLabel(label));
        form->addWidget(field, stretch);
    }
    m_form = new RunForm;
    auto* scroll = new QScrollArea;
    scroll->setWidget(m_form);
    scroll->setWidgetResizable(true);
    auto* split = new QSplitter;
    split->setObjectName(QStringLiteral("setupFormEditor"));
    split->addWidget(scroll);
    split->addWidget(m_editor);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(split, 1);
    layout->addWidget(m_issues);
    layout->addWidget(m_summary);
    layout->addLayout(form);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(train, 1);
    buttons->addWidget(sweep);
    layout->addLayout(buttons);

    m_validate = new QTimer(this);
    m_validate->setSingleShot(true);
    m_validate->setInterval(400);  // validate when typing pauses
    connect(m_validate, &QTimer::timeout, this, [this] { validate(); });
    connect(m_editor, &QPlainTextEdit::textChanged, m_validate, qOverload<>(&QTimer::start));
    connect(m_issues, &QListWidget::currentRowChanged, this, &SetupPanel::jumpToIssue);
    // A form edit rewrites the YAML with every value written out (includes inlined).
    connect(m_form, &RunForm::yamlEdited, this, [this](const QString& yaml) {
        m_editor->setPlainText(yaml);
        Q_EMIT statusMessage(tr("Config rewritten from the form"));
    });
    connect(open, &QPushButton::clicked, this, &SetupPanel::onOpen);
    connect(saveAs, &QPushButton::clicked, this, &SetupPanel::onSaveAs);
    connect(m_preset, &QComboBox::activated, this, [this](int i) { loadFile(m_preset->itemData(i).toString()); });
    connect(train, &QPushButton::clicked, this, [this] {
        if (auto r = request())
            Q_EMIT trainRequested(*r);
    });
    connect(sweep, &QPushButton::clicked, this, &SetupPanel::onSweep);
    fillPresets(configRoot);
    if (m_preset->count() > 0)
        loadFile(m_preset->itemData(0).toString());
}

void SetupPanel::fillPresets(const QString& root)
{
    QDir dir(root);
    for (const auto& f : QDir(dir.filePath("quick")).entryInfoList({"*.yaml"}, QDir::Files, QDir::Name))
        m_preset->addItem(tr("quick (CPU): %1").arg(f.completeBaseName()), f.absoluteFilePath());
    QDirIterator it(dir.filePath("tasks"), {"*.yaml"}, QDir::Files, QDirIterator::Subdirectories);
    QStringList reference;
    while (it.hasNext())
        reference << it.next();
    reference.sort();
    for (const auto& path : reference)
        m_preset->addItem(tr("reference: %1/%2").arg(QFileInfo(path).dir().dirName(),
                                                     QFileInfo(path).completeBaseName()),
                          QFileInfo(path).absoluteFilePath());
}

QString SetupPanel::text() const { return m_editor->toPlainText(); }

void SetupPanel::setText(const QString& yaml) { m_editor->setPlainText(yaml); }

bool SetupPanel::loadFile(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) {
        Q_EMIT statusMessage(tr("Cannot read %1").arg(path));
        return false;
    }
    m_file = QFileInfo(path).absoluteFilePath();
    m_editor->setPlainText(QString::fromUtf8(f.readAll()));
    const int i = m_preset->findData(m_file);
    if (i >= 0)
        m_preset->setCurrentIndex(i);
    validate();
    return true;
}

bool SetupPanel::saveFile(const QString& path)
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Text))
        return false;
    f.write(m_editor->toPlainText().toUtf8());
    if (!f.commit())
        return false;
    m_file = QFileInfo(path).absoluteFilePath();
    return true;
}

QStringList SetupPanel::validate()
{
    m_issues->clear();
    m_issueLines.clear();
    QStringList issues;
    const QString name = m_file.isEmpty() ? tr("<editor>") : m_file;
    const QString dir = m_file.isEmpty() ? QDir::currentPath() : QFileInfo(m_file).absolutePath();
    auto add = [&](const engine::ConfigIssue& i, bool warning) {
        issues << QString::fromStdString(i.toString());
        auto* item = new QListWidgetItem((warning ? tr("warning: ") : QString()) + issues.last());
        item->setForeground(warning ? QColor("#9A6700") : QColor("#B00020"));
        m_issues->addItem(item);
        // Lines in the edited file itself can be jumped to; included files' cannot.
        m_issueLines.push_back(QFileInfo(QString::fromStdString(i.where.file)) == QFileInfo(name) ||
                                       i.where.file == name.toStdString()
                                   ? i.where.line
                                   : 0);
    };
    try {
        const auto loaded = engine::loadConfigTextAt(text().toStdString(), name.toStdString(), dir.toStdString());
        for (const auto& w : loaded.warnings)
            add(w, true);
        const auto& c = loaded.runs.at(0);
        m_form->setConfig(c);
        m_form->showIssues({});
        m_summary->setText(tr("✔ %1 (%2), %3 + %4: H %5 × %6 layers × %7 heads; D = %8, %9 points; "
                              "%10 steps × batch %11%12")
                               .arg(QString::fromStdString(c.task.name), QString::fromStdString(c.task.data),
                                    QString::fromStdString(c.model.family),
                                    QString::fromStdString(c.peDisplayName()))
                               .arg(c.model.hiddenSize).arg(c.model.numLayers).arg(c.model.numHeads)
                               .arg(c.inputDims()).arg(c.trainPoints())
                               .arg(c.training.maxSteps).arg(c.training.batchSize)
                               .arg(loaded.runs.size() > 1 ? tr("; %1 runs (max_length list)").arg(loaded.runs.size())
                                                           : QString()));
        m_issues->setVisible(m_issues->count() > 0);  // the list takes room only when it has lines
        return {};
    } catch (const engine::ConfigError& e) {
        for (const auto& i : e.issues())
            add(i, false);
        m_form->showIssues(e.issues());
        issues.clear();
        for (const auto& i : e.issues())
            issues << QString::fromStdString(i.toString());
    } catch (const std::exception& e) {
        issues << QString::fromUtf8(e.what());
        m_issues->addItem(issues.last());
        m_issueLines.push_back(0);
    }
    m_summary->setText(tr("✘ %n problem(s): fix them to train", nullptr, int(issues.size())));
    m_issues->setVisible(true);
    return issues;
}

QString SetupPanel::labelFor(const engine::RunConfig& run)
{
    return QStringLiteral("%1 · %2").arg(QString::fromStdString(run.task.name),
                                         QString::fromStdString(run.peDisplayName()));
}

std::optional<TrainRequest> SetupPanel::request()
{
    if (!validate().isEmpty())
        return std::nullopt;
    const QString name = m_file.isEmpty() ? tr("<editor>") : m_file;
    const QString dir = m_file.isEmpty() ? QDir::currentPath() : QFileInfo(m_file).absolutePath();
    TrainRequest r;
    r.runs = engine::loadConfigTextAt(text().toStdString(), name.toStdString(), dir.toStdString()).runs;
    // Named by what it trains, not by the file it started from: a preset edited to another
    // PE must not carry the preset's name.
    r.label = labelFor(r.runs.front());
    r.options.outDir = m_out->text().toStdString();
    r.options.device = m_device->currentData().toString().toStdString();
    if (m_steps->value() > 0)
        r.options.maxSteps = m_steps->value();
    if (m_seed->value() > 0)
        r.options.seed = std::uint64_t(m_seed->value());
    return r;
}

std::vector<TrainRequest> SetupPanel::sweepRequests(const TrainRequest& base, const QStringList& pes)
{
    std::vector<TrainRequest> out;
    for (const QString& pe : pes) {
        TrainRequest r;
        r.options = base.options;
        for (engine::RunConfig c : base.runs) {
            if (c.model.backbone != engine::Backbone::Llama)
                throw engine::ConfigError({{{c.sourceFile, 0, 0}, "model.family",
                                            "a position-encoding sweep needs the Llama backbone"}});
            // Written the way the reference's configs name a PE; the factor is left to the
            // reference's rule for the new PE (a YaRN factor does not carry over to PI).
            c.position = engine::PositionConfig{};
            c.position.type = pe.toStdString();
            if (pe != QStringLiteral("rope")) {
                c.position.patchName = c.position.type;
                c.position.explicitScaling = true;
            }
            c.model.maxLengths = {c.model.maxLength};
            // Re-load so derived values and validation come from the engine, not from here.
            auto loaded = engine::loadConfigTextAt(engine::toYaml(c), c.sourceFile, ".");
            r.runs.insert(r.runs.end(), loaded.runs.begin(), loaded.runs.end());
        }
        if (r.runs.empty())
            continue;
        r.label = labelFor(r.runs.front());
        out.push_back(std::move(r));
    }
    return out;
}

void SetupPanel::onSweep()
{
    auto base = request();
    if (!base)
        return;
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Sweep position encodings"));
    auto* list = new QListWidget;
    for (const auto& p : engine::knownPositionTypes()) {
        auto* item = new QListWidgetItem(QString::fromStdString(p), list);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Checked);
    }
    auto* box = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    box->button(QDialogButtonBox::Ok)->setText(tr("Queue"));
    connect(box, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(box, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(&dialog);
    layout->addWidget(new QLabel(tr("Train this config once with each checked encoding, one after another:")));
    layout->addWidget(list);
    layout->addWidget(box);
    if (dialog.exec() != QDialog::Accepted)
        return;
    QStringList pes;
    for (int i = 0; i < list->count(); ++i)
        if (list->item(i)->checkState() == Qt::Checked)
            pes << list->item(i)->text();
    try {
        const auto requests = sweepRequests(*base, pes);
        for (const auto& r : requests)
            Q_EMIT trainRequested(r);
        Q_EMIT statusMessage(tr("Queued %n run(s) of the sweep", nullptr, int(requests.size())));
    } catch (const engine::ConfigError& e) {
        QMessageBox::warning(this, tr("Sweep"), QString::fromStdString(e.what()));
    }
}

void SetupPanel::setOutputFolder(const QString& dir) { m_out->setText(dir); }
QString SetupPanel::outputFolder() const { return m_out->text(); }
void SetupPanel::setSteps(int steps) { m_steps->setValue(steps); }

void SetupPanel::jumpToIssue(int row)
{
    if (row < 0 || size_t(row) >= m_issueLines.size() || m_issueLines[size_t(row)] <= 0)
        return;
    const auto block = m_editor->document()->findBlockByLineNumber(m_issueLines[size_t(row)] - 1);
    QTextCursor cursor(block);
    m_editor->setTextCursor(cursor);
    m_editor->setFocus();
}

void SetupPanel::onOpen()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open run config"), QFileInfo(m_file).absolutePath(),
                                                      tr("YAML configs (*.yaml *.yml)"));
    if (!path.isEmpty())
        loadFile(path);
}

void SetupPanel::onSaveAs()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Save run config"), m_file,
                                                      tr("YAML configs (*.yaml *.yml)"));
    if (path.isEmpty())
        return;
    if (saveFile(path))
        Q_EMIT statusMessage(tr("Saved %1").arg(path));
    else
        QMessageBox::warning(this, tr("Save failed"), tr("Cannot write %1").arg(path));
}

}  // namespace lengen::ui
