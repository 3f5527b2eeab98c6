// Offering and running the import of the Python code's runs (reference_import_offer.h).

#include "reference_import_offer.h"

#include <QDialog>
#include <QFileInfo>
#include <memory>

#include "ask.h"
#include "reference_import.h"
#include "run_controller.h"

namespace lengen::studio {

ReferenceImportOffer::ReferenceImportOffer(QWidget* window, ui::RunController& controller,
                                           std::function<QString()> outputFolder)
    : QObject(window), m_window(window), m_controller(controller),
      m_outputFolder(std::move(outputFolder))
{}

void ReferenceImportOffer::offer(const QString& folder, const QStringList& runDirs)
{
    if (m_asking)  // one offer at a time; adding the folder lists its runs again
        return;
    const QString out = m_outputFolder();
    const QStringList pending = ui::pendingReferenceRuns(folder, out);
    if (pending.isEmpty()) {
        Q_EMIT statusMessage(tr("The %n run(s) of the Python code in %1 are already imported "
                                "into %2",
                                nullptr, int(runDirs.size()))
                                 .arg(folder, out));
        Q_EMIT folderToList(out);
        return;
    }
    // Asked with open() (this runs from the Runs list's signal): the import starts on Yes.
    m_asking = ui::ask::confirm(
        m_window, tr("Runs of the Python code"),
        tr("%1 holds %n run(s) of the reference's Python code (config.yaml + state.pt).\n\n"
           "Import them into %2? Each becomes a LenGen run with its weights and optimizer "
           "state (and metrics.json's curves where present), ready to evaluate, probe and "
           "compare. The original folders are not changed.",
           nullptr, int(pending.size()))
            .arg(folder, out),
        [this, pending, out] { importRuns(pending, out); });
}

// A job like the others: the Jobs panel shows it, Stop ends it between runs; what it brought
// in is listed when it ends.
void ReferenceImportOffer::importRuns(const QStringList& runDirs, const QString& out)
{
    auto summary = std::make_shared<ui::ReferenceImportSummary>();
    const quint64 id = m_controller.enqueue(
        ui::JobKind::Import, tr("import %n Python run(s)", nullptr, int(runDirs.size())),
        ui::referenceImportJob(runDirs, out, summary), QFileInfo(out).absoluteFilePath());
    Q_EMIT statusMessage(
        tr("Importing %n run(s) of the Python code into %1…", nullptr, int(runDirs.size()))
            .arg(out));
    m_controller.whenEnded(id, this, [this, out, summary](const ui::JobInfo&) {
        Q_EMIT folderToList(out);
        if (!summary->runFiles.isEmpty())
            Q_EMIT runToSelect(summary->runFiles.front());
        const QString text =
            tr("%n run(s) imported into %1", nullptr, int(summary->runFiles.size())).arg(out) +
            (summary->failed ? tr(", %n failed", nullptr, summary->failed) : QString()) +
            (summary->cancelled ? tr(" (stopped)") : QString());
        Q_EMIT statusMessage(text);
        if (summary->failed)
            Q_EMIT problem(tr("Runs of the Python code"), text + ".", summary->messages.join('\n'));
    });
}

}  // namespace lengen::studio
