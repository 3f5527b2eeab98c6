// The studio's open path on the reliability corpus (tests/corpus, made by the `corpus` test):
// every damaged run, analysis and map file is opened the way MainWindow::openRun does it —
// run table row, training view, evaluation and probe views with each of their figures drawn,
// attention view — offscreen. It passes when none of them crashes or hangs (the corpus once
// crashed the studio on 3 of 23 damaged files and hung it on one) and every run file the engine
// cannot read says why in its run-table row.

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "attention_view.h"
#include "figure_view.h"
#include "lengen/engine/errors.h"
#include "lengen/engine/run_file.h"
#include "run_controller.h"
#include "run_table_model.h"
#include "training_view.h"

using namespace lengen;

class TestStudioCorpus final : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void opensEveryDamagedFileWithoutCrashing();
};

void TestStudioCorpus::opensEveryDamagedFileWithoutCrashing()
{
    const QString corpus = qEnvironmentVariable("LENGEN_CORPUS");
    QFile index(corpus + "/index.json");
    if (corpus.isEmpty() || !index.open(QIODevice::ReadOnly))
        QSKIP("no corpus (the ctest `corpus` test makes it; LENGEN_CORPUS names it)");
    const auto cases = QJsonDocument::fromJson(index.readAll()).object()["cases"].toArray();
    const QMap<QString, QString> names{
        {"run", "run.h5"}, {"analysis", "analysis.h5"}, {"maps", "attention_maps.h5"}};
    ui::RunController controller;
    ui::TrainingView training(controller);
    ui::FigureView figures([](const figures::FigureInfo&) { return true; }, "none");
    ui::AttentionView attention;
    QElapsedTimer clock;
    clock.start();
    int opened = 0, rowsWithReason = 0, damagedRuns = 0;
    for (const auto& value : cases) {
        const auto c = value.toObject();
        const QString kind = c["kind"].toString();
        if (!names.contains(kind) || QRandomGenerator(uint(c["id"].toString().toInt())).bounded(3))
            continue;  // a third of the files: the whole corpus takes minutes
        QTemporaryDir scratch;
        for (const auto& k : names.keys()) {
            const QString from =
                k == kind ? corpus + "/" + c["path"].toString() : corpus + "/good/" + names[k];
            QFile::copy(from, scratch.filePath(names[k]));
        }
        const QString run = scratch.filePath("run.h5");
        const auto row = ui::RunTableModel::readRow(run);
        if (kind == "run") {
            bool unreadable = false;
            try {
                engine::readRunInfo(run.toStdString());
            } catch (const engine::Error&) {
                unreadable = true;
            }
            if (unreadable) {  // the row must say why, not show an empty "0x0x0" run
                ++damagedRuns;
                QVERIFY2(!row.error.isEmpty(), qPrintable(c["why"].toString()));
                QVERIFY2(row.error.contains("run.h5"), qPrintable(row.error));
                // The browser row shows the reason, and no sizes of a run it could not read.
                ui::RunTableModel table;
                table.setFolders({run});
                const auto cell = [&](int col) { return table.index(0, col).data().toString(); };
                QVERIFY2(cell(ui::RunTableModel::Status).startsWith("damaged — "),
                         qPrintable(cell(ui::RunTableModel::Status)));
                QVERIFY(cell(ui::RunTableModel::Status).size() > 20);
                QCOMPARE(cell(ui::RunTableModel::Size), QString("—"));
                QCOMPARE(cell(ui::RunTableModel::Steps), QString("—"));
                ++rowsWithReason;
            }
        }
        training.showRunLog(run);
        figures.setRun(run);
        for (const auto& name : figures.figureNames())
            figures.showFigure(name);
        attention.setRun(run);
        QCoreApplication::processEvents();
        ++opened;
    }
    qInfo("opened %d damaged files in %.1f s; the %d unreadable run files say why in their row",
          opened, clock.elapsed() / 1000.0, rowsWithReason);
    QVERIFY(opened > 50);
    QVERIFY(rowsWithReason > 10);
}

QTEST_MAIN(TestStudioCorpus)
#include "tst_studio_corpus.moc"
