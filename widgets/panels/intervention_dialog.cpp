#include "intervention_dialog.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QVBoxLayout>

#include "lengen/engine/interventions.h"

namespace lengen::ui {

namespace {
// One line per intervention, what it does in a few words (docs/interventions.md has the rest).
QString summary(const QString& name)
{
    static const QHash<QString, QString> text = {
        {"truncate", InterventionDialog::tr("only the most recent examples that fit the training length")},
        {"segments", InterventionDialog::tr("average of predictions after each chunk of examples")},
        {"pi", InterventionDialog::tr("position interpolation: positions / factor")},
        {"ntk", InterventionDialog::tr("NTK-aware base scaling")},
        {"dynamic_ntk", InterventionDialog::tr("NTK scaling from the prompt's length")},
        {"yarn", InterventionDialog::tr("YaRN: frequency ramp and temperature")},
        {"lambda", InterventionDialog::tr("LM-Infinite Λ-mask: first tokens + recent window")},
        {"window", InterventionDialog::tr("sliding window of the training length")},
        {"logit_scale", InterventionDialog::tr("logits × log n / log L beyond the training length")},
        {"mamba_dt", InterventionDialog::tr("Mamba's step Δ × train / eval length")},
        {"longheads", InterventionDialog::tr("per head: first, own and best-matching chunks")},
    };
    return text.value(name);
}
}  // namespace

InterventionDialog::InterventionDialog(Mode mode, const QString& runLabel, const QStringList& applicable,
                                       QWidget* parent)
    : QDialog(parent), m_mode(mode), m_group(new QButtonGroup(this))
{
    setWindowTitle(mode == Mode::Evaluate ? tr("Evaluate with interventions") : tr("Probe under an intervention"));
    auto* intro = new QLabel(
        (mode == Mode::Evaluate
             ? tr("Evaluate %1 under training-free length extensions: each is compared with the untouched "
                  "model and the baselines on the same prompts. Only those that apply to this run are listed.")
             : tr("Probe the attention of %1 under one training-free length extension; its maps are shown "
                  "beside the untouched ones in the Attention view."))
            .arg(runLabel));
    intro->setWordWrap(true);
    auto* box = new QGroupBox(tr("Interventions"));
    auto* grid = new QGridLayout(box);
    m_group->setExclusive(mode == Mode::Probe);
    int row = 0;
    for (const auto& name : applicable) {
        if (name == QLatin1String("none"))
            continue;
        QCheckBox* check = mode == Mode::Probe ? nullptr : new QCheckBox(name);
        QAbstractButton* button = check ? static_cast<QAbstractButton*>(check) : new QRadioButton(name);
        button->setObjectName(name);
        if (check)
            m_boxes << check;
        m_group->addButton(button, row);
        grid->addWidget(button, row, 0);
        auto* what = new QLabel(summary(name));
        what->setEnabled(false);
        grid->addWidget(what, row, 1);
        ++row;
    }
    m_extra = new QLineEdit;
    m_extra->setObjectName(QStringLiteral("extra"));
    m_extra->setPlaceholderText(tr("e.g. yarn:factor=4, lambda:global=4,local=train"));
    m_extra->setToolTip(tr("More interventions with parameters, in the syntax of lengen eval --intervention"));
    auto* form = new QFormLayout;
    form->addRow(tr("With parameters:"), m_extra);
    if (mode == Mode::Evaluate) {
        m_standard = new QCheckBox(tr("standard (the training length)"));
        m_ood = new QCheckBox(tr("ood_length (8× the training length)"));
        m_standard->setChecked(true);
        m_ood->setChecked(true);
        auto* methods = new QVBoxLayout;
        methods->addWidget(m_standard);
        methods->addWidget(m_ood);
        form->addRow(tr("Methods:"), methods);
    }
    m_problem = new QLabel;
    m_problem->setStyleSheet(QStringLiteral("color: #b00020"));
    m_problem->setWordWrap(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(mode == Mode::Evaluate ? tr("Evaluate") : tr("Probe"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(box);
    layout->addLayout(form);
    layout->addWidget(m_problem);
    layout->addWidget(buttons);
    auto ok = buttons->button(QDialogButtonBox::Ok);
    auto update = [this, ok] {
        validate();
        ok->setEnabled(m_problem->text().isEmpty() && !interventions().isEmpty() &&
                       (m_mode == Mode::Probe || !methods().isEmpty()));
    };
    connect(m_group, &QButtonGroup::buttonToggled, this, update);
    connect(m_extra, &QLineEdit::textChanged, this, update);
    for (auto* c : {m_standard, m_ood})
        if (c)
            connect(c, &QCheckBox::toggled, this, update);
    update();
}

void InterventionDialog::validate()
{
    m_problem->clear();
    const auto text = m_extra->text().trimmed();
    if (text.isEmpty())
        return;
    try {
        engine::parseInterventions(text.toStdString());
    } catch (const std::exception& e) {
        m_problem->setText(QString::fromUtf8(e.what()));
    }
}

QStringList InterventionDialog::interventions() const
{
    QStringList out;
    for (auto* b : m_group->buttons())
        if (b->isChecked())
            out << b->objectName();
    const auto text = m_extra->text().trimmed();
    if (!text.isEmpty())
        try {
            for (const auto& s : engine::parseInterventions(text.toStdString()))
                out << QString::fromStdString(s.text());
        } catch (const std::exception&) {
        }
    return out;
}

QStringList InterventionDialog::methods() const
{
    QStringList out;
    if (m_standard && m_standard->isChecked())
        out << QStringLiteral("standard");
    if (m_ood && m_ood->isChecked())
        out << QStringLiteral("ood_length");
    return out;
}

void InterventionDialog::choose(const QStringList& specs)
{
    QStringList extra;
    for (const auto& s : specs) {
        bool ticked = false;
        for (auto* b : m_group->buttons())
            if (b->objectName() == s) {
                b->setChecked(true);
                ticked = true;
            }
        if (!ticked)
            extra << s;
    }
    if (!extra.isEmpty())
        m_extra->setText(extra.join(QStringLiteral(", ")));
}

}  // namespace lengen::ui
