#pragma once
// Tags of several runs at once (issue 55), from the Runs list with more than one run selected:
// tags to add and tags to remove, applied to every run in one step (engine::editTags under each
// run's lock, as `lengen note RUN... --add-tag/--remove-tag`). A run that refuses (a process
// trains it) is named in the dialog, which stays open; the others change. GUI thread.

#include <QDialog>
#include <QStringList>

class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace lengen::ui {

class RunTagsDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RunTagsDialog)

public:
    /// `common`: the tags every run has (the Runs list's rows know them), shown as a reminder.
    RunTagsDialog(const QStringList& runFiles, const QStringList& common,
                  QWidget* parent = nullptr);
    /// Sets the fields (tests; a user types) and presses Apply: true when every run took them.
    bool apply(const QString& add, const QString& remove);
    QString errorText() const;
    /// The tags every run has, as given (the line under the title).
    QString commonTagsText() const;
    void accept() override;

Q_SIGNALS:
    /// Runs whose tags changed (also when others refused): the Runs list reads them again.
    void runsChanged(const QStringList& runFiles);

private:
    QStringList m_runs;
    QLineEdit* m_add;
    QLineEdit* m_remove;
    QLabel* m_common;
    QLabel* m_error;
    QDialogButtonBox* m_buttons;
};

}  // namespace lengen::ui
