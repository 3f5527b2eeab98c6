#include "run_tags_dialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include <string>
#include <vector>

#include "lengen/engine/run_file.h"

namespace lengen::ui {

RunTagsDialog::RunTagsDialog(const QStringList& runFiles, const QStringList& common,
                             QWidget* parent)
    : QDialog(parent), m_runs(runFiles)
{
    setWindowTitle(tr("Tags of %n run(s)", nullptr, int(runFiles.size())));
    m_add = new QLineEdit;
    m_add->setPlaceholderText(tr("lr-sweep, paper-fig3"));
    m_remove = new QLineEdit;
    m_remove->setPlaceholderText(tr("draft"));
    for (auto* field : {m_add, m_remove})
        field->setToolTip(tr("Comma-separated; each at most 40 characters"));
    m_common = new QLabel(common.isEmpty()
                              ? tr("No tag is on all of them.")
                              : tr("On all of them: %1").arg(common.join(QStringLiteral(", "))));
    m_error = new QLabel;
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #B02020"));
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Apply | QDialogButtonBox::Cancel);
    auto* form = new QFormLayout;
    form->addRow(tr("Add tags"), m_add);
    form->addRow(tr("Remove tags"), m_remove);
    auto* layout = new QVBoxLayout(this);
    QStringList names;
    for (const auto& run : runFiles)
        names << QFileInfo(run).dir().dirName();
    auto* which = new QLabel(tr("Runs: %1").arg(names.join(QStringLiteral(", "))));
    which->setWordWrap(true);
    which->setToolTip(runFiles.join('\n'));
    layout->addWidget(which);
    layout->addWidget(m_common);
    layout->addLayout(form);
    layout->addWidget(m_error);
    layout->addWidget(m_buttons);
    m_buttons->button(QDialogButtonBox::Apply)->setDefault(true);  // Enter applies
    connect(m_buttons->button(QDialogButtonBox::Apply), &QPushButton::clicked, this,
            &RunTagsDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    resize(480, 220);
}

void RunTagsDialog::accept()
{
    const std::vector<std::string> add{m_add->text().toStdString()},
        remove{m_remove->text().toStdString()};
    QStringList changed, refused;
    for (const auto& run : m_runs) {
        try {
            engine::updateRunNotes(run.toStdString(), [&](engine::RunNotes& notes) {
                engine::editTags(notes, add, remove);
            });
            changed << run;
        } catch (const std::exception& e) {
            refused << QString::fromUtf8(e.what());
        }
    }
    if (!changed.isEmpty())
        Q_EMIT runsChanged(changed);
    if (!refused.isEmpty()) {  // stays open, naming what did not change
        m_error->setText(tr("%n run(s) kept their tags:", nullptr, int(refused.size())) + "\n" +
                         refused.join('\n'));
        return;
    }
    QDialog::accept();
}

bool RunTagsDialog::apply(const QString& add, const QString& remove)
{
    m_add->setText(add);
    m_remove->setText(remove);
    accept();
    return result() == QDialog::Accepted;
}

QString RunTagsDialog::errorText() const { return m_error->text(); }

QString RunTagsDialog::commonTagsText() const { return m_common->text(); }

}  // namespace lengen::ui
