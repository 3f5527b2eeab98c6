#pragma once
// A run's notes and tags, edited in the studio (issue 41): free text and a comma-separated tag
// line, written into run.h5 by engine::writeRunNotes when OK is pressed. A refusal (the run
// trains, a bad tag) is shown in the dialog, which stays open with what was typed. GUI thread.

#include <QDialog>

#include <string>
#include <vector>

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;

namespace lengen::ui {

class RunNotesDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunNotesDialog)

public:
    /// For `runFile` as its row names it (`runLabel`); `training`: a process writes it now, so
    /// the fields are read-only and say why.
    RunNotesDialog(const QString& runFile, const QString& runLabel, bool training,
                   QWidget* parent = nullptr);
    /// Sets the fields (tests; a user types) and presses OK: true when the notes were written.
    bool save(const QString& notes, const QString& tags);
    QString errorText() const;

    void accept() override;

private:
    QString m_runFile;
    std::string m_readNotes;  ///< what the file held when the dialog opened
    std::vector<std::string> m_readTags;
    QPlainTextEdit* m_notes;
    QLineEdit* m_tags;
    QLabel* m_error;
    QDialogButtonBox* m_buttons;
};

}  // namespace lengen::ui
