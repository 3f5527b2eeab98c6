#include "setup_panel.h"
#include "ask.h"
#include "wheel_guard.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDirIterator>
#include <QFile>
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

#include <QSpinBox>
#include <QSplitter>
#include <QTextBlock>
#include <QTimer>
#include <QVBoxLayout>
#include <map>

#include <tuple>

#include "lengen/engine/config_text.h"
#include "lengen/engine/encodings.h"
#include "lengen/engine/errors.h"
#include "refusing_spin_box.h"
#include "run_form.h"

namespace lengen::ui {

SetupPanel::SetupPanel(const QString& configRoot, QWidget* parent)
    : QWidget(parent), m_configRoot(QFileInfo(configRoot).absoluteFilePath())
{
    m_preset = new QComboBox;
    auto* open = new QPushButton(tr("Open…"));
    auto* saveAs = new QPushButton(tr("Save as…"));
    createControls();
    layOut(open, saveAs);
    wireControls(open, saveAs);
    fillPresets(configRoot);
    if (m_preset->count() > 0)
        loadFile(m_preset->itemData(0).toString());
}

// The editor, its issues and summary, the run overrides and the buttons that start a run.
void SetupPanel::createControls()
{
    m_editor = new QPlainTextEdit;
    m_editor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_editor->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_issues = new QListWidget;
    m_issues->setMaximumHeight(90);
    m_summary = new QLabel;
    m_summary->setWordWrap(true);
    // Fields that refuse what they cannot hold (-500 steps was 500, 1e9 was 19, 2.5 was 25).
    m_steps = new RefusingSpinBox(0, 10'000'000);
    m_steps->setSpecialValueText(tr("as configured"));
    m_seed = new RefusingSpinBox(0, 2'000'000'000);
    m_seed->setSpecialValueText(tr("config or random"));
    m_device = new QComboBox;
    m_device->addItem(tr("best available"), QString());
    m_device->addItem(QStringLiteral("cpu"), QStringLiteral("cpu"));
    m_device->addItem(QStringLiteral("cuda"), QStringLiteral("cuda"));
    m_out = new QLineEdit(QStringLiteral("runs"));
    m_train = new QPushButton(tr("Train"));
    m_train->setDefault(true);
    m_sweep = new QPushButton(tr("New sweep from this config…"));
    m_sweep->setObjectName(QStringLiteral("newSweep"));
}

// The preset bar, the form beside the editor, the issues, the overrides and the buttons; the
// form (RunForm) is made here, inside its scroll area.
void SetupPanel::layOut(QPushButton* open, QPushButton* saveAs)
{
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Preset:")));
    top->addWidget(m_preset, 1);
    top->addWidget(open);
    top->addWidget(saveAs);
    // The run overrides on one line: they are set per run, the config holds the rest.
    auto* form = new QHBoxLayout;
    for (auto [label, field, stretch] :
         {std::tuple<QString, QWidget*, int>{tr("Steps"), m_steps, 1},
          {tr("Seed"), m_seed, 1},
          {tr("Device"), m_device, 1},
          {tr("Output folder"), m_out, 3}}) {
        form->addWidget(new QLabel(label));
        form->addWidget(field, stretch);
    }
    m_form = new RunForm;
    guardWheel(m_form);  // scrolling the form scrolls it, never changes a field
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
    buttons->addWidget(m_train, 1);
    buttons->addWidget(m_sweep);
    layout->addLayout(buttons);
}

// Validating as typing pauses, and what the editor, the form, the overrides and the buttons do.
void SetupPanel::wireControls(QPushButton* open, QPushButton* saveAs)
{
    m_validate = new QTimer(this);
    m_validate->setSingleShot(true);
    m_validate->setInterval(400);  // validate when typing pauses
    connect(m_validate, &QTimer::timeout, this, [this] { validate(); });
    connect(m_steps, &QSpinBox::valueChanged, this, &SetupPanel::showSummary);
    connect(m_editor, &QPlainTextEdit::textChanged, this, [this] {
        if (m_settingText)
            return;
        m_model.markEdited();
        m_validate->start();
    });
    connect(m_issues, &QListWidget::currentRowChanged, this, &SetupPanel::jumpToIssue);
    connect(m_form, &RunForm::edited, this, &SetupPanel::onFormEdited);
    connect(m_form, &RunForm::refusalsChanged, this, &SetupPanel::updateTrain);
    for (auto* box : {m_steps, m_seed})
        connect(box, &QSpinBox::editingFinished, this, &SetupPanel::updateTrain,
                Qt::QueuedConnection);
    connect(open, &QPushButton::clicked, this, &SetupPanel::onOpen);
    connect(saveAs, &QPushButton::clicked, this, &SetupPanel::saveAs);
    connect(m_preset, &QComboBox::activated, this, &SetupPanel::onPresetChosen);
    connect(m_train, &QPushButton::clicked, this, [this] {
        if (auto r = request())
            Q_EMIT trainRequested(*r);
    });
    connect(m_sweep, &QPushButton::clicked, this, &SetupPanel::onSweep);
}

void SetupPanel::fillPresets(const QString& root)
{
    QDir dir(root);
    for (const auto& f :
         QDir(dir.filePath("quick")).entryInfoList({"*.yaml"}, QDir::Files, QDir::Name))
        m_preset->addItem(tr("quick (CPU): %1").arg(f.completeBaseName()), f.absoluteFilePath());
    QDirIterator it(dir.filePath("tasks"), {"*.yaml"}, QDir::Files, QDirIterator::Subdirectories);
    QStringList reference;
    while (it.hasNext())
        reference << it.next();
    reference.sort();
    for (const auto& path : reference)
        m_preset->addItem(
            tr("reference: %1/%2")
                .arg(QFileInfo(path).dir().dirName(), QFileInfo(path).completeBaseName()),
            QFileInfo(path).absoluteFilePath());
}

QString SetupPanel::text() const { return m_editor->toPlainText(); }

void SetupPanel::setText(const QString& yaml)
{
    m_editor->setPlainText(yaml);  // a user's text: marks the editor edited, validates soon
}

QString SetupPanel::sourceName() const { return m_model.sourceName(); }

void SetupPanel::selectPreset(const QString& path)
{
    int i = m_preset->findData(path);
    if (i < 0) {  // a file of the user's: listed first, so the box names what is shown
        m_preset->insertItem(0, tr("file: %1").arg(QFileInfo(path).fileName()), path);
        m_preset->setItemData(0, path, Qt::ToolTipRole);
        i = 0;
    }
    m_preset->setCurrentIndex(i);
    m_model.setPresetIndex(i);
}

bool SetupPanel::confirmDiscard()
{
    if (!m_model.edited())
        return true;
    // modal: destructive (unsaved edits are lost); its callers go on with the answer
    return QMessageBox::question(this, tr("Discard edits?"),
                                 tr("The config has edits that are not saved (%1). Discard them?")
                                     .arg(QFileInfo(m_model.file()).fileName()),
                                 QMessageBox::Discard | QMessageBox::Cancel,
                                 QMessageBox::Cancel) == QMessageBox::Discard;
}

void SetupPanel::onPresetChosen(int index)
{
    if (!m_model.isSwitch(index))
        return;
    if (!confirmDiscard()) {
        m_preset->setCurrentIndex(m_model.presetIndex());
        return;
    }
    loadFile(m_preset->itemData(index).toString());
}

void SetupPanel::onFormEdited()
{
    // The form changed fields of the draft's struct; the engine writes, derives and validates.
    // Text typed in the editor and not parsed yet is parsed first, so the edit builds on it.
    if (m_validate->isActive() || m_model.draft().source() != text().toStdString())
        validate();
    engine::RunConfig edited = m_model.draft().config();
    m_form->applyTo(edited);
    m_model.markEdited();
    m_model.draft().edit(edited, sourceName().toStdString(), m_model.editedName().toStdString());
    m_settingText = true;
    m_editor->setPlainText(QString::fromStdString(m_model.draft().text()));
    m_settingText = false;
    m_validate->stop();
    showResult();
    if (!m_model.draft()
             .valid())  // the form now shows the edited struct: the next edit compares with it
        m_form->setConfig(m_model.draft().config());
}

bool SetupPanel::loadFile(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) {
        Q_EMIT statusMessage(tr("Cannot read %1").arg(path));
        return false;
    }
    m_settingText = true;
    m_editor->setPlainText(QString::fromUtf8(f.readAll()));
    m_settingText = false;
    m_model.setFile(path);
    // What was refused belonged to the config shown before: the new one's values stand, and
    // the Steps and Seed boxes go back to what they hold (issue 70, defect 5: both stayed red
    // and Train disabled after another preset was picked).
    m_form->clearRefusals();
    clearRefusal(m_steps);
    clearRefusal(m_seed);
    selectPreset(m_model.file());
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
    m_model.setFile(path);
    selectPreset(m_model.file());
    validate();  // messages now name the saved file
    return true;
}

QStringList SetupPanel::validate()
{
    m_validate->stop();
    m_model.draft().parse(text().toStdString(), sourceName().toStdString(),
                          m_model.folder().toStdString());
    return showResult();
}

QStringList SetupPanel::showResult()
{
    m_issues->clear();
    m_issueLines.clear();
    QStringList issues;
    const std::string name = sourceName().toStdString();
    auto add = [&](const engine::ConfigIssue& i, bool warning) {
        auto* item = new QListWidgetItem((warning ? tr("warning: ") : QString()) +
                                         QString::fromStdString(i.toString()));
        item->setForeground(warning ? QColor("#9A6700") : QColor("#B00020"));
        m_issues->addItem(item);
        // Lines of the editor's own text can be jumped to; included files' cannot.
        m_issueLines.push_back(i.where.file == name ||
                                       QFileInfo(QString::fromStdString(i.where.file)) ==
                                           QFileInfo(QString::fromStdString(name))
                                   ? i.where.line
                                   : 0);
        if (!warning)
            issues << QString::fromStdString(i.toString());
    };
    for (const auto& w : m_model.draft().warnings())
        add(w, true);
    for (const auto& i : m_model.draft().issues())
        add(i, false);
    if (!m_model.draft().failure().empty()) {
        issues << QString::fromStdString(m_model.draft().failure());
        m_issues->addItem(issues.last());
        m_issueLines.push_back(0);
    }
    const bool ok = m_model.draft().valid();
    // What the user typed for each refused key, read off its line in the editor, so the form
    // shows that text as "not applied" rather than the last valid value.
    std::map<std::string, QString> typed;
    const QStringList lines = text().split(QLatin1Char('\n'));
    for (const auto& i : m_model.draft().issues()) {
        const bool here = i.where.file == name;
        if (!here || i.where.line < 1 || i.where.line > lines.size() || i.keyPath.empty())
            continue;
        const QString key = QString::fromStdString(i.keyPath).section(QLatin1Char('.'), -1);
        QString line = lines[i.where.line - 1].section(QLatin1Char('#'), 0, 0);
        const int colon = line.indexOf(key + QLatin1Char(':'));
        if (colon >= 0)
            typed[i.keyPath] = line.mid(colon + key.size() + 1).trimmed();
    }
    m_form->showIssues(m_model.draft().issues(), typed);
    updateTrain();
    if (!ok) {
        m_summary->setText(tr("✘ %n problem(s): fix them to train", nullptr, int(issues.size())));
        m_issues->setVisible(true);
        return issues;
    }
    m_form->setConfig(m_model.draft().config());
    updateTrain();  // the config's values may have replaced a refusal typed in the form
    showSummary();
    m_issues->setVisible(m_issues->count() > 0);  // the list takes room only when it has lines
    return {};
}

QStringList SetupPanel::refusedFields() const
{
    auto out = m_form->refusedFields();
    for (auto [name, box] : {std::pair{tr("Steps"), m_steps}, {tr("Seed"), m_seed}})
        if (const QString typed = refusedText(box); !typed.isEmpty())
            out << tr("%1 “%2”").arg(name, typed);
    return out;
}

// Train and New sweep need a valid config and no field showing a value it did not apply: a
// run started then would train what the field no longer shows.
void SetupPanel::updateTrain()
{
    m_model.setRefused(refusedFields());
    m_model.setStepsOverride(m_steps->value());
    m_model.setSeedOverride(m_seed->value());
    m_train->setEnabled(m_model.canTrain());
    m_sweep->setEnabled(m_model.canTrain());
    m_train->setToolTip(m_model.trainTip());
    m_sweep->setToolTip(m_model.sweepTip());
    showSummary();  // a refused Steps is said there too
}

// What Train will run, as the model says (the Steps field overrides max_steps).
void SetupPanel::showSummary()
{
    if (!m_model.draft().valid() || m_model.draft().runs().empty())
        return;
    m_form->setStepsOverride(m_steps->value(), refusedText(m_steps));
    m_model.setStepsOverride(m_steps->value());
    m_summary->setText(m_model.summary());
}

QString SetupPanel::summaryText() const { return m_summary->text(); }

QString SetupPanel::labelFor(const engine::RunConfig& run) { return SetupModel::labelFor(run); }

std::optional<TrainRequest> SetupPanel::request()
{
    // The text was parsed when it changed (or by the form's edit): parse only what is new.
    if (m_validate->isActive() || m_model.draft().source() != text().toStdString())
        validate();
    if (!m_model.draft().valid())
        return std::nullopt;
    if (const auto refused = refusedFields(); !refused.isEmpty()) {
        updateTrain();
        Q_EMIT statusMessage(
            tr("Not trained: %1 not applied").arg(refused.join(QStringLiteral(", "))));
        return std::nullopt;
    }
    updateTrain();  // the overrides as the boxes hold them now
    return m_model.request(m_out->text().toStdString(),
                           m_device->currentData().toString().toStdString());
}

SweepBase SetupPanel::sweepBase()
{
    if (m_validate->isActive() || m_model.draft().source() != text().toStdString())
        validate();
    updateTrain();  // the overrides and refusals as the boxes hold them now
    return m_model.sweepBase();
}

void SetupPanel::onSweep()
{
    if (const auto base = sweepBase(); !base.refusal.isEmpty())
        return Q_EMIT statusMessage(tr("No sweep: %1").arg(base.refusal));
    Q_EMIT sweepRequested();
}

void SetupPanel::setOutputFolder(const QString& dir) { m_out->setText(dir); }
QString SetupPanel::outputFolder() const { return m_out->text(); }
void SetupPanel::setSteps(int steps)
{
    clearRefusal(m_steps);  // a value set from outside replaces what was typed and refused
    m_steps->setValue(steps);
    updateTrain();
}

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
    if (!confirmDiscard())
        return;
    ask::openFile(this, tr("Open run config"), QFileInfo(m_model.file()).absolutePath(),
                  tr("YAML configs (*.yaml *.yml)"),
                  [this](const QString& path) { loadFile(path); });
}

void SetupPanel::saveAs()
{
    ask::saveFile(this, tr("Save run config"), defaultSavePath(), tr("YAML configs (*.yaml *.yml)"),
                  [this](const QString& path) { saveAsPath(path); });
}

void SetupPanel::saveAsPath(const QString& path)
{
    if (QFileInfo(path).absoluteFilePath().startsWith(m_configRoot + '/') &&
        // modal: destructive (a shipped preset is overwritten)
        QMessageBox::question(this, tr("Overwrite a shipped preset?"),
                              tr("%1 is a preset that ships with LenGen. Overwrite it?").arg(path),
                              QMessageBox::Save | QMessageBox::Cancel,
                              QMessageBox::Cancel) != QMessageBox::Save)
        return;
    if (saveFile(path))
        Q_EMIT statusMessage(tr("Saved %1").arg(path));
    else
        ask::tell(this, tr("Save failed"), tr("Cannot write %1").arg(path), true);
}

QString SetupPanel::defaultSavePath() const { return m_model.defaultSavePath(m_configRoot); }

}  // namespace lengen::ui
