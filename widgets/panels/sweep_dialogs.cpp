#include "sweep_dialogs.h"

#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QSpinBox>
#include <QPushButton>
#include <QVBoxLayout>

#include <map>

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

// Lays out `form` above OK / Cancel (OK named `ok`) and asks; true when accepted.
bool ask(QDialog& d, QFormLayout* form, const QString& ok)
{
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(ok);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &d, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &d, &QDialog::reject);
    auto* layout = new QVBoxLayout(&d);
    layout->addLayout(form);
    layout->addWidget(buttons);
    return d.exec() == QDialog::Accepted;
}

}  // namespace

std::optional<engine::NewSweep> askNewSweep(QWidget* parent, const QString& defaultFolder)
{
    QDialog d(parent);
    d.setWindowTitle(QObject::tr("New sweep from the Set up config"));
    auto* form = new QFormLayout;
    auto* peBox = new QWidget;
    auto* peGrid = new QGridLayout(peBox);
    peGrid->setContentsMargins(0, 0, 0, 0);
    std::vector<std::pair<QString, QCheckBox*>> pes;
    int i = 0;
    for (const auto& pe : engine::sweepPeNames()) {
        auto* box = new QCheckBox(peText(pe));
        if (const auto* e = engine::findEncoding(pe))
            box->setToolTip(QString::fromStdString(e->summary));
        box->setChecked(pe == "rope" || pe == "nope" || pe == "alibi" || pe == "fire");
        peGrid->addWidget(box, i / 5, i % 5);
        pes.emplace_back(QString::fromStdString(pe), box);
        ++i;
    }
    form->addRow(QObject::tr("Position encodings"), peBox);
    auto* seeds = new QSpinBox;
    seeds->setRange(1, 100);
    seeds->setValue(3);
    form->addRow(QObject::tr("Seeds per cell"), seeds);
    auto* tasks = new QLineEdit;
    tasks->setPlaceholderText(QObject::tr("the config's task; or e.g. linear_regression, sparse_linear_regression"));
    form->addRow(QObject::tr("Tasks"), tasks);
    auto* sets = new QLineEdit;
    sets->setPlaceholderText(QObject::tr("e.g. model.num_hidden_layers=4,6; training.max_steps=5000"));
    form->addRow(QObject::tr("Config axes"), sets);
    auto* eval = new QCheckBox(QObject::tr("evaluate each cell (standard, ood_length)"));
    eval->setChecked(true);
    auto* probe = new QCheckBox(QObject::tr("probe each cell (attention, duplicated examples, serial position)"));
    form->addRow(QString(), eval);
    form->addRow(QString(), probe);
    auto* folder = new QLineEdit(defaultFolder);
    form->addRow(QObject::tr("Sweep folder"), folder);
    if (!ask(d, form, QObject::tr("Create")))
        return std::nullopt;
    engine::NewSweep r;
    for (const auto& [pe, box] : pes)
        if (box->isChecked())
            r.pes.push_back(pe.toStdString());
    r.seeds = seeds->value();
    for (const auto& t : tasks->text().simplified().remove(' ').split(',', Qt::SkipEmptyParts))
        r.tasks.push_back(t.toStdString());
    for (const auto& s : sets->text().split(';', Qt::SkipEmptyParts))
        if (!s.trimmed().isEmpty())
            r.sets.push_back(engine::parseAxisSetting(s.trimmed().remove(' ').toStdString()));
    r.eval = eval->isChecked();
    r.probe = probe->isChecked();
    r.outDir = folder->text().trimmed().toStdString();
    return r;
}

std::optional<engine::SlurmSweepOptions> askSubmit(QWidget* parent)
{
    QDialog d(parent);
    d.setWindowTitle(QObject::tr("Submit to Slurm"));
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
    if (!ask(d, form, QObject::tr("Submit")))
        return std::nullopt;
    engine::SlurmSweepOptions o;
    o.partition = partition->text().trimmed().toStdString();
    o.time = time->text().trimmed().toStdString();
    o.cpusPerJob = cpus->value();
    o.gpusPerJob = gpus->value();
    o.maxParallel = parallel->value();
    if (o.gpusPerJob > 0)
        o.device = "cuda";
    return o;
}

std::optional<QStringList> askPeSweep(QWidget* parent)
{
    QDialog d(parent);
    d.setWindowTitle(QObject::tr("Sweep position encodings"));
    auto* list = new QListWidget;
    for (const auto& p : engine::knownPositionTypes()) {
        auto* item = new QListWidgetItem(QString::fromStdString(engine::peLabel(p)), list);
        item->setData(Qt::UserRole, QString::fromStdString(p));
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Checked);
    }
    auto* form = new QFormLayout;
    form->addRow(new QLabel(QObject::tr("Train this config once with each checked encoding, one "
                                        "after another (a sweep with one pe axis):")));
    form->addRow(list);
    if (!ask(d, form, QObject::tr("Queue")))
        return std::nullopt;
    QStringList pes;
    for (int i = 0; i < list->count(); ++i)
        if (list->item(i)->checkState() == Qt::Checked)
            pes << list->item(i)->data(Qt::UserRole).toString();
    return pes;
}

}  // namespace lengen::ui
