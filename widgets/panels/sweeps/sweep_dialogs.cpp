#include "sweep_dialogs.h"

#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include <functional>
#include <limits>
#include <map>
#include <memory>

#include "field_mark.h"
#include "lengen/engine/config.h"
#include "lengen/engine/config_edit.h"
#include "lengen/engine/encodings.h"

namespace lengen::ui {

namespace {

// The sweep's pe names as a researcher reads them (PI, Dynamic NTK; Mamba and GPT-2 are
// backbones without a Llama position encoding).
QString peText(const std::string& pe)
{
    const auto* e = engine::findEncoding(pe);
    return QString::fromStdString(e ? e->display : pe);
}

// Lays out `form` above a problem line and OK / Cancel (OK named `ok`) and opens the dialog
// window-modal with open(): no nested event loop, jobs and timers run on. OK calls `answer`
// with a reply: it returns a problem to show at once, or "" and calls the reply later (the
// dialog waits with OK disabled: a job decides). `fieldOf` picks the field a problem is about,
// framed red until the next OK.
void openForm(QDialog* d, QFormLayout* form, const QString& ok,
              std::function<QString(DialogReply)> answer,
              std::function<QWidget*(const QString&)> fieldOf = {})
{
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    auto* okButton = buttons->button(QDialogButtonBox::Ok);
    okButton->setText(ok);
    auto* problem = new QLabel;
    problem->setObjectName(QStringLiteral("problem"));
    problem->setStyleSheet(QStringLiteral("color: #b00020"));
    problem->setWordWrap(true);
    problem->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto framed = std::make_shared<QPointer<QWidget>>();
    const QPointer<QDialog> alive(d);
    const auto show = [alive, problem, okButton, framed, fieldOf](const QString& why) {
        if (!alive)
            return;  // closed while the job ran
        okButton->setEnabled(true);
        if (*framed)
            markRefused(*framed, false);
        if (why.isEmpty())
            return alive->accept();
        problem->setText(why);
        if (QWidget* f = fieldOf ? fieldOf(why) : nullptr) {
            markRefused(f, true);
            f->setToolTip(why);
            f->setFocus();
            *framed = f;
        }
    };
    QObject::connect(buttons, &QDialogButtonBox::accepted, d,
                     [problem, okButton, show, answer = std::move(answer)] {
                         problem->setText(QObject::tr("Working…"));
                         okButton->setEnabled(false);
                         if (const QString why = answer(show); !why.isEmpty())
                             show(why);
                     });
    QObject::connect(buttons, &QDialogButtonBox::rejected, d, &QDialog::reject);
    auto* layout = new QVBoxLayout(d);
    layout->addLayout(form);
    layout->addWidget(problem);
    layout->addWidget(buttons);
    d->setAttribute(Qt::WA_DeleteOnClose);
    d->open();
}

}  // namespace

QString freeFolder(const QString& base)
{
    const auto freeAt = [](const QString& path) {
        const QFileInfo f(path);
        return !f.exists() || (f.isDir() && QDir(path).isEmpty());
    };
    if (freeAt(base))
        return base;
    for (int n = 2;; ++n)
        if (const QString next = QStringLiteral("%1-%2").arg(base).arg(n); freeAt(next))
            return next;
}

QString defaultSweepFolder(const QStringList& runsFolders, const QString& current)
{
    for (const auto& f : runsFolders)
        if (!f.isEmpty() && QFileInfo(f).isDir())
            return freeFolder(QDir(f).absoluteFilePath(QStringLiteral("sweeps/sweep")));
    return freeFolder(QDir(current).absoluteFilePath(QStringLiteral("sweeps/sweep")));
}

bool folderUnder(const QString& dir, const QStringList& folders)
{
    const QString path = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
    for (const auto& f : folders) {
        const QString base = QDir::cleanPath(QFileInfo(f).absoluteFilePath());
        if (!f.isEmpty() && (path == base || path.startsWith(base + QLatin1Char('/'))))
            return true;
    }
    return false;
}

namespace {

// The New sweep dialog's choices, remembered between dialogs (QSettings "newSweep/…").
struct SweepChoiceBoxes {
    std::vector<std::pair<QString, QCheckBox*>> pes;
    QSpinBox* seeds;
    QLineEdit *tasks, *sets;
    QCheckBox *eval, *probe, *skipRefused;
};

void restoreChoices(const SweepChoiceBoxes& b)
{
    const QSettings last;
    if (!last.contains(QStringLiteral("newSweep/pes")))
        return;  // never created one: the defaults
    const auto chosen = last.value(QStringLiteral("newSweep/pes")).toStringList();
    for (const auto& [pe, box] : b.pes)
        box->setChecked(chosen.contains(pe));
    b.seeds->setValue(last.value(QStringLiteral("newSweep/seeds"), 3).toInt());
    b.tasks->setText(last.value(QStringLiteral("newSweep/tasks")).toString());
    b.sets->setText(last.value(QStringLiteral("newSweep/sets")).toString());
    b.eval->setChecked(last.value(QStringLiteral("newSweep/eval"), true).toBool());
    b.probe->setChecked(last.value(QStringLiteral("newSweep/probe"), false).toBool());
    b.skipRefused->setChecked(last.value(QStringLiteral("newSweep/skipRefused"), false).toBool());
}

void rememberChoices(const SweepChoiceBoxes& b)
{
    QSettings remember;
    QStringList chosen;
    for (const auto& [pe, box] : b.pes)
        if (box->isChecked())
            chosen << pe;
    remember.setValue(QStringLiteral("newSweep/pes"), chosen);
    remember.setValue(QStringLiteral("newSweep/seeds"), b.seeds->value());
    remember.setValue(QStringLiteral("newSweep/tasks"), b.tasks->text());
    remember.setValue(QStringLiteral("newSweep/sets"), b.sets->text());
    remember.setValue(QStringLiteral("newSweep/eval"), b.eval->isChecked());
    remember.setValue(QStringLiteral("newSweep/probe"), b.probe->isChecked());
    remember.setValue(QStringLiteral("newSweep/skipRefused"), b.skipRefused->isChecked());
}

// The position encodings to sweep, five check boxes a row (the paper's four case studies ticked);
// each box is added to `pes` with its encoding's config name.
QWidget* newSweepPeBox(std::vector<std::pair<QString, QCheckBox*>>& pes)
{
    auto* peBox = new QWidget;
    auto* peGrid = new QGridLayout(peBox);
    peGrid->setContentsMargins(0, 0, 0, 0);
    int i = 0;
    for (const auto& pe : engine::sweepPeNames()) {
        auto* box = new QCheckBox(peText(pe));
        box->setObjectName(QString::fromStdString(pe));
        const auto* e = engine::findEncoding(pe);
        if (e)
            box->setToolTip(QString::fromStdString(e->summary));
        box->setChecked(e && e->paperCase);  // the paper's four case studies
        peGrid->addWidget(box, i / 5, i % 5);
        pes.emplace_back(QString::fromStdString(pe), box);
        ++i;
    }
    return peBox;
}

// The rows under the encodings: seeds, tasks, config axes and the stages each cell runs.
SweepChoiceBoxes newSweepChoiceRows(QFormLayout* form,
                                    std::vector<std::pair<QString, QCheckBox*>> pes)
{
    auto* seeds = new QSpinBox;
    seeds->setObjectName(QStringLiteral("sweepSeeds"));
    seeds->setRange(1, 100);
    seeds->setValue(3);
    form->addRow(QObject::tr("Seeds per cell"), seeds);
    auto* tasks = new QLineEdit;
    tasks->setPlaceholderText(
        QObject::tr("the config's task; or e.g. linear_regression, sparse_linear_regression"));
    form->addRow(QObject::tr("Tasks"), tasks);
    auto* sets = new QLineEdit;
    sets->setObjectName(QStringLiteral("sets"));
    sets->setPlaceholderText(
        QObject::tr("e.g. model.num_hidden_layers=4,6; training.max_steps=5000"));
    form->addRow(QObject::tr("Config axes"), sets);
    auto* eval = new QCheckBox(QObject::tr("evaluate each cell (standard, ood_length)"));
    eval->setChecked(true);
    auto* probe = new QCheckBox(
        QObject::tr("probe each cell (attention, duplicated examples, serial position)"));
    // As `sweep new --skip-refused`: a grid of every encoding x randomized positions is then
    // the grid without NoPE and CoPE under them, rather than refused whole.
    auto* skipRefused = new QCheckBox(QObject::tr("leave out combinations the config refuses "
                                                  "(e.g. NoPE with randomized positions)"));
    skipRefused->setObjectName(QStringLiteral("skipRefused"));
    form->addRow(QString(), eval);
    form->addRow(QString(), probe);
    form->addRow(QString(), skipRefused);
    return {std::move(pes), seeds, tasks, sets, eval, probe, skipRefused};
}

// The sweep the dialog's choices ask for, into `r`; the problem with them ("" when none).
QString newSweepRequest(const SweepChoiceBoxes& b, const QLineEdit* folder, engine::NewSweep& r)
{
    for (const auto& [pe, box] : b.pes)
        if (box->isChecked())
            r.pes.push_back(pe.toStdString());
    r.seeds = b.seeds->value();
    for (const auto& t : b.tasks->text().simplified().remove(' ').split(',', Qt::SkipEmptyParts))
        r.tasks.push_back(t.toStdString());
    try {
        for (const auto& s : b.sets->text().split(';', Qt::SkipEmptyParts))
            if (!s.trimmed().isEmpty())
                r.sets.push_back(engine::parseAxisSetting(s.trimmed().remove(' ').toStdString()));
    } catch (const std::exception& e) {
        return QObject::tr("Config axes: %1").arg(QString::fromUtf8(e.what()));
    }
    r.eval = b.eval->isChecked();
    r.probe = b.probe->isChecked();
    r.skipRefused = b.skipRefused->isChecked();
    r.outDir = folder->text().trimmed().toStdString();
    if (r.outDir.empty())
        return QObject::tr("Sweep folder: choose one");
    return {};
}

// The field a refusal is about: the folder (it exists), an axis, the encodings.
QWidget* newSweepFieldOf(const QString& why, QWidget* folder, QWidget* sets, QWidget* peBox)
{
    if (why.contains(QStringLiteral("Sweep folder")) ||
        why.contains(QStringLiteral("already exists")))
        return folder;
    if (why.contains(QStringLiteral("Config axes")) || why.contains(QStringLiteral("axes.")))
        return sets;
    if (why.contains(QStringLiteral("pe=")) || why.contains(QStringLiteral("position encoding")))
        return peBox;
    return nullptr;
}

}  // namespace

QDialog* askNewSweep(QWidget* parent, const QString& defaultFolder, const engine::RunConfig& base,
                     std::function<void(engine::NewSweep, DialogReply)> then)
{
    auto* d = new QDialog(parent);
    d->setObjectName(QStringLiteral("newSweepDialog"));
    d->setWindowTitle(QObject::tr("New sweep from the Set up config"));
    auto* form = new QFormLayout;
    std::vector<std::pair<QString, QCheckBox*>> pes;
    QWidget* peBox = newSweepPeBox(pes);
    form->addRow(QObject::tr("Position encodings"), peBox);
    const SweepChoiceBoxes boxes = newSweepChoiceRows(form, std::move(pes));
    // The steps each cell trains: what Set up would train (issue 80, defect 1: the cells
    // trained the config's 15,000 while Set up's Steps said 300).
    auto* steps = new QSpinBox;
    steps->setObjectName(QStringLiteral("sweepSteps"));
    steps->setRange(1, std::numeric_limits<int>::max());
    steps->setGroupSeparatorShown(true);
    steps->setValue(
        int(std::min<std::int64_t>(base.training.maxSteps, std::numeric_limits<int>::max())));
    steps->setToolTip(QObject::tr("training.max_steps of every cell: the Set up tab's Steps "
                                  "field, else its config's"));
    form->addRow(QObject::tr("Steps per cell"), steps);
    auto* folder = new QLineEdit(defaultFolder);
    folder->setObjectName(QStringLiteral("folder"));
    form->addRow(QObject::tr("Sweep folder"), folder);
    // The last sweep's choices (issue 70, defect 18: every New sweep started from the
    // defaults); the folder is always a free one.
    restoreChoices(boxes);
    openForm(
        d, form, QObject::tr("Create"),
        [=](DialogReply reply) -> QString {
            engine::NewSweep r;
            r.base = base;
            r.base.training.maxSteps = steps->value();
            if (const QString why = newSweepRequest(boxes, folder, r); !why.isEmpty())
                return why;
            rememberChoices(boxes);
            then(std::move(r), reply);
            return {};
        },
        [=](const QString& why) { return newSweepFieldOf(why, folder, boxes.sets, peBox); });
    return d;
}

QDialog* askSubmit(QWidget* parent, std::function<void(engine::SlurmSweepOptions)> then)
{
    auto* d = new QDialog(parent);
    d->setObjectName(QStringLiteral("submitDialog"));
    d->setWindowTitle(QObject::tr("Submit to Slurm"));
    auto* form = new QFormLayout;
    auto* partition = new QLineEdit;
    partition->setPlaceholderText(QObject::tr("the cluster's default"));
    auto* time = new QLineEdit;
    time->setPlaceholderText(QObject::tr("per cell, e.g. 2:00:00 (default: the partition's)"));
    auto* cpus = new QSpinBox;
    cpus->setRange(1, 256);
    auto* gpus = new QSpinBox;
    gpus->setRange(0, 16);
    auto* parallel = new QSpinBox;
    parallel->setRange(0, 10000);
    parallel->setSpecialValueText(QObject::tr("no limit"));
    form->addRow(QObject::tr("Partition"), partition);
    form->addRow(QObject::tr("Time limit"), time);
    form->addRow(QObject::tr("CPUs per cell"), cpus);
    form->addRow(QObject::tr("GPUs per cell"), gpus);
    form->addRow(QObject::tr("Cells at once"), parallel);
    openForm(d, form, QObject::tr("Submit"), [=](DialogReply reply) -> QString {
        engine::SlurmSweepOptions o;
        o.partition = partition->text().trimmed().toStdString();
        o.time = time->text().trimmed().toStdString();
        o.cpusPerJob = cpus->value();
        o.gpusPerJob = gpus->value();
        o.maxParallel = parallel->value();
        if (o.gpusPerJob > 0)
            o.device = "cuda";
        then(std::move(o));
        reply({});
        return {};
    });
    return d;
}

}  // namespace lengen::ui
