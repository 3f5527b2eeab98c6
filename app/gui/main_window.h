#pragma once
// The studio's window: arranges the panels and wires them to the run controller. Logic lives
// in the panels and the engine; this class only builds menus, tabs and connections.

#include <QMainWindow>
#include <QTimer>

#include "run_controller.h"

class QTabWidget;

namespace lengen::ui {
class AttentionView;
class CompareView;
class SweepsView;
class FigureView;
class RunBrowser;
class SetupPanel;
class TrainingView;
struct TrainRequest;
}  // namespace lengen::ui

namespace lengen::studio {

struct StudioOptions {
    QString configRoot;       ///< folder with quick/ and tasks/
    QString preset;           ///< config file to load at start
    QString runsFolder = QStringLiteral("runs");
    QString openRun;          ///< run to open at start
    QStringList compare;      ///< runs to overlay in the Compare tab at start
    QString sweep;            ///< sweep folder to show in the Sweeps tab at start
    int steps = 0;            ///< override training.max_steps (0 = as configured)
    bool train = false;       ///< start training the preset at once
};

class MainWindow final : public QMainWindow {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MainWindow)

public:
    explicit MainWindow(const StudioOptions& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    ui::RunController& controller() { return m_controller; }
    QTabWidget* tabs() const { return m_tabs; }
    QString openRunFile() const { return m_openRun; }
    void openRun(const QString& runFile);
    void train(const ui::TrainRequest& request);
    void evaluateOpenRun();
    void probeOpenRun();
    /// Overlays these runs' evaluation curves in the Compare tab.
    void compareRuns(const QStringList& runFiles);
    void overlayTraining(const QStringList& runFiles);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildMenus();
    void wireController();
    void restoreSettings();
    void openPath(const QString& path);
    /// Offers to import runs of the reference's Python code found under `folder`.
    void offerReferenceImport(const QString& folder, const QStringList& runDirs);

    ui::RunController m_controller;
    QTabWidget* m_tabs = nullptr;
    ui::SetupPanel* m_setup = nullptr;
    ui::TrainingView* m_training = nullptr;
    ui::RunBrowser* m_browser = nullptr;
    ui::FigureView* m_eval = nullptr;
    ui::FigureView* m_probes = nullptr;
    ui::AttentionView* m_attention = nullptr;
    ui::CompareView* m_compare = nullptr;
    ui::SweepsView* m_sweeps = nullptr;
    QString m_openRun;
    QTimer m_follow;  ///< re-reads a run another process is writing
    bool m_offeringImport = false;  ///< adding the runs folder must not offer again
};

}  // namespace lengen::studio
