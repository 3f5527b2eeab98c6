#include "run_notes_dialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"

namespace lengen::ui {

RunNotesDialog::RunNotesDialog(const QString& runFile, const QString& runLabel, bool training,
                               QWidget* parent)
    : QDialog(parent), m_runFile(runFile)
{
    setWindowTitle(tr("Notes — %1").arg(runLabel));
    m_notes = new QPlainTextEdit;
    m_notes->setPlaceholderText(tr("What this run is for, what you saw, what to try next…"));
    m_tags = new QLineEdit;
    m_tags->setPlaceholderText(tr("baseline, lr-sweep, paper-fig3"));
    m_tags->setToolTip(tr("Comma-separated; each at most 40 characters. The Runs list's filter "
                          "matches tags and notes."));
    m_error = new QLabel;
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #B02020"));
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel);
    try {
        const auto info = engine::readRunInfo(runFile.toStdString());
        m_readNotes = info.notes;
        m_readTags = info.tags;
        m_notes->setPlainText(QString::fromStdString(info.notes));
        QStringList tags;
        for (const auto& t : info.tags)
            tags << QString::fromStdString(t);
        m_tags->setText(tags.join(QStringLiteral(", ")));
    } catch (const std::exception& e) {
        m_error->setText(QString::fromUtf8(e.what()));
        training = true;  // nothing to edit in a file that does not read
    }
    if (training) {
        m_notes->setReadOnly(true);
        m_tags->setReadOnly(true);
        m_buttons->button(QDialogButtonBox::Save)->setEnabled(false);
        if (m_error->text().isEmpty())
            m_error->setText(tr("This run is training: its file takes no notes until it stops "
                                "(HDF5 allows no new attributes in a file being written)."));
    }
    auto* form = new QFormLayout;
    form->addRow(tr("Notes"), m_notes);
    form->addRow(tr("Tags"), m_tags);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(
        tr("Stored in %1, beside the training records; a resume keeps them.").arg(runFile)));
    layout->addLayout(form);
    layout->addWidget(m_error);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &RunNotesDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    resize(520, 360);
}

void RunNotesDialog::accept()
{
    std::vector<std::string> tags = engine::splitTags(m_tags->text().toStdString());
    try {
        // Refused when another process changed them since the dialog read them: its edit would
        // be overwritten without anyone seeing it.
        engine::updateRunNotes(m_runFile.toStdString(), [&](engine::RunNotes& now) {
            if (now.text != m_readNotes || now.tags != m_readTags)
                throw engine::Error(
                    engine::ErrorKind::RunFile,
                    "the notes or tags were changed by another process since this dialog opened; "
                    "close it and open it again to see them");
            now = {m_notes->toPlainText().toStdString(), tags};
        });
    } catch (const std::exception& e) {
        m_error->setText(QString::fromUtf8(e.what()));  // stays open with what was typed
        return;
    }
    QDialog::accept();
}

bool RunNotesDialog::save(const QString& notes, const QString& tags)
{
    m_notes->setPlainText(notes);
    m_tags->setText(tags);
    accept();
    return result() == QDialog::Accepted;
}

QString RunNotesDialog::errorText() const { return m_error->text(); }

}  // namespace lengen::ui
