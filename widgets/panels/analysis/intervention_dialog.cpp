#include "intervention_dialog.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QVBoxLayout>

#include "lengen/engine/config.h"
#include "lengen/engine/interventions.h"

namespace lengen::ui {

namespace {
// One line per intervention, what it does in a few words (the engine's table;
// docs/interventions.md has the rest).
QString summary(const QString& name)
{
    const auto* info = engine::findIntervention(name.toStdString());
    return info ? QString::fromStdString(info->summary) : QString();
}

// A hint of the syntax from the interventions this run takes (no yarn hint on NoPE): one
// example per kind of intervention, those that change the model first.
QString examples(const QStringList& applicable)
{
    using S = engine::InterventionScope;
    QStringList out;
    for (const S scope : {S::Rotary, S::Attention, S::Recurrent, S::Every})
        for (const auto& name : applicable)
            if (const auto* info = engine::findIntervention(name.toStdString());
                info && info->scope == scope && info->example.find(':') != std::string::npos) {
                if (out.size() < 2)
                    out << QString::fromStdString(info->example);
                break;
            }
    return out.isEmpty() ? QString()
                         : InterventionDialog::tr("e.g. %1").arg(out.join(QStringLiteral(", ")));
}
}  // namespace

InterventionDialog::InterventionDialog(Mode mode, const QString& runLabel,
                                       const QStringList& applicable, QWidget* parent)
    : QDialog(parent), m_mode(mode), m_group(new QButtonGroup(this))
{
    setWindowTitle(mode == Mode::Evaluate ? tr("Evaluate with interventions")
                                          : tr("Probe under an intervention"));
    auto* intro =
        new QLabel((mode == Mode::Evaluate ? tr("Evaluate %1 under training-free length "
                                                "extensions: each is compared with the untouched "
                                                "model and the baselines on the same prompts. Only "
                                                "those that apply to this run are listed.")
                                           : tr("Probe the attention of %1 under one training-free "
                                                "length extension; its maps are shown "
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
        QAbstractButton* button =
            check ? static_cast<QAbstractButton*>(check) : new QRadioButton(name);
        button->setObjectName(name);
        if (check)
            m_boxes << check;
        m_group->addButton(button, row);
        grid->addWidget(button, row, 0);
        auto* what = new QLabel(summary(name));
        what->setBuddy(button);
        grid->addWidget(what, row, 1);
        ++row;
    }
    m_extra = new QLineEdit;
    m_extra->setObjectName(QStringLiteral("extra"));
    m_extra->setPlaceholderText(examples(applicable));
    m_extra->setToolTip(
        tr("More interventions with parameters, in the syntax of lengen eval --intervention"));
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
    buttons->button(QDialogButtonBox::Ok)
        ->setText(mode == Mode::Evaluate ? tr("Evaluate") : tr("Probe"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(box);
    layout->addLayout(form);
    layout->addWidget(m_problem);
    layout->addWidget(buttons);
    auto ok = buttons->button(QDialogButtonBox::Ok);
    m_update = [this, ok] {
        validate();
        ok->setEnabled(m_problem->text().isEmpty() && !interventions().isEmpty() &&
                       (m_mode == Mode::Probe || !methods().isEmpty()));
    };
    const auto update = m_update;
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
        const auto specs = engine::parseInterventions(text.toStdString());
        if (!m_config)
            return;
        // Resolved at the longest length the dialog evaluates (ood_length, 8×), as the
        // evaluation will: a refused spec or a value out of range is named here.
        const int points = 8 * m_config->trainPoints();
        for (const auto& spec : specs) {
            if (const auto why = engine::interventionRefusal(spec, *m_config); !why.empty()) {
                m_problem->setText(
                    tr("%1 is refused: %2")
                        .arg(QString::fromStdString(spec.text()), QString::fromStdString(why)));
                return;
            }
            engine::describeIntervention(spec, *m_config, points);
        }
    } catch (const std::exception& e) {
        m_problem->setText(QString::fromUtf8(e.what()));
    }
}

void InterventionDialog::setRunConfig(const engine::RunConfig& config)
{
    m_config = std::make_shared<const engine::RunConfig>(config);
    m_update();
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
