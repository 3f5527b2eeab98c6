#pragma once
// The offer to import runs of the reference's Python code (issue 82 §5, a class of its own):
// when the Runs list finds config.yaml + state.pt folders, it asks once (open(), never exec():
// the finding arrives through a signal) and queues one import job on the controller; when the
// job ends it says what came in and where. It touches no view: the window lists the folder and
// selects the first run from its signals. GUI thread.

#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <functional>

class QDialog;
class QWidget;

namespace lengen::ui {
class RunController;
}  // namespace lengen::ui

namespace lengen::studio {

class ReferenceImportOffer final : public QObject {
    Q_OBJECT

public:
    /// `window`: the parent of its question; `outputFolder`: where imports go (Set up's runs
    /// folder, read when an offer is made).
    ReferenceImportOffer(QWidget* window, ui::RunController& controller,
                         std::function<QString()> outputFolder);

    /// Offers to import the runs of the Python code under `folder` not imported yet; one offer
    /// at a time.
    void offer(const QString& folder, const QStringList& runDirs);
    /// The import itself, without asking: one job over `runDirs` into `out`.
    void importRuns(const QStringList& runDirs, const QString& out);

Q_SIGNALS:
    void statusMessage(QString message);
    void problem(QString title, QString message, QString detail);
    /// The folder imports went to: the Runs list should list it.
    void folderToList(QString folder);
    /// The first run an import brought in.
    void runToSelect(QString runFile);

private:
    QWidget* m_window;
    ui::RunController& m_controller;
    std::function<QString()> m_outputFolder;
    QPointer<QDialog> m_asking;  ///< the question while it is up
};

}  // namespace lengen::studio
