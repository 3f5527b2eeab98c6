// `lengen-studio`: the desktop application. Parses the command line, builds the window.

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QTabWidget>
#include <QTimer>

#include <cstdio>
#include <cstdlib>

#include "display_check.h"
#include "lengen/engine/session.h"
#include "lengen/engine/version.h"
#include "main_window.h"

namespace {

// What the studio reads from its environment, read here only (tests/code_rules.sh).
struct StudioEnvironment {
    QString configs;  ///< LENGEN_CONFIGS
    lengen::studio::DisplayEnvironment display;

    static StudioEnvironment read()
    {
        StudioEnvironment e;
        e.configs = qEnvironmentVariable("LENGEN_CONFIGS");
        e.display = {qgetenv("QT_QPA_PLATFORM"), qgetenv("DISPLAY"), qgetenv("WAYLAND_DISPLAY"),
                     qgetenv("XDG_RUNTIME_DIR")};
        return e;
    }
};

// The shipped configs: $LENGEN_CONFIGS, an installed share/lengen/configs, or the source tree.
QString findConfigRoot(const QString& env)
{
    const QStringList candidates{
        env, QCoreApplication::applicationDirPath() + "/../share/lengen/configs",
        QStringLiteral(LENGEN_SOURCE_CONFIGS), QStringLiteral("configs")};
    for (const auto& c : candidates)
        if (!c.isEmpty() && QFileInfo(c + "/quick").isDir())
            return QDir(c).absolutePath();
    return QStringLiteral("configs");
}

// --screenshots: every tab of the window as a PNG, then quit (docs and smoke tests).
void saveScreenshots(lengen::studio::MainWindow& w, const QString& dir)
{
    QDir().mkpath(dir);
    for (int i = 0; i < w.tabs()->count(); ++i) {
        w.tabs()->setCurrentIndex(i);
        QApplication::processEvents();
        const QString name = w.tabs()->tabText(i).toLower().replace(' ', '_');
        w.grab().save(dir + "/studio_" + name + ".png");
    }
}

void setApplicationNames()
{
    QCoreApplication::setApplicationName(QStringLiteral("LenGen Studio"));
    QCoreApplication::setOrganizationName(QStringLiteral("LenGen"));
    QCoreApplication::setApplicationVersion(
        QString::fromStdString(lengen::engine::versionString()));
}

// --help and --version need no window system: answered before QApplication connects to one
// (without a display it would abort).
bool onlyWantsText(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "-h" || a == "--help" || a == "--help-all" || a == "-?" || a == "-v" ||
            a == "--version")
            return true;
    }
    return false;
}

}  // namespace

static int runStudio(int argc, char** argv)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "LenGen Studio: train, evaluate and probe in-context function learners and see how "
        "position encodings decide length generalization."));
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption preset("preset", "Run config to load into the setup panel.", "config");
    QCommandLineOption train("train", "Start training the loaded config at once.");
    QCommandLineOption steps("steps", "Override training.max_steps.", "n");
    QCommandLineOption runs("runs", "Folder for new runs and the run browser (default: runs).",
                            "dir", "runs");
    QCommandLineOption open("open",
                            "Open this run (folder or run.h5), or add a folder of runs "
                            "(a models/ folder of the Python code offers their import).",
                            "run");
    QCommandLineOption compare("compare",
                               "Overlay these runs (comma-separated) in the Compare tab.", "runs");
    QCommandLineOption sweep("sweep",
                             "Show this sweep folder (lengen sweep new) in the Sweeps tab.", "dir");
    QCommandLineOption analyse("analyse", "After training: evaluate and probe the new run.");
    QCommandLineOption quitIdle("quit-when-idle", "Quit once every queued job has ended.");
    QCommandLineOption shots("screenshots",
                             "Save a screenshot of every tab into this folder "
                             "(after queued jobs end), then quit.",
                             "dir");
    parser.addOptions({preset, train, steps, runs, open, compare, sweep, analyse, quitIdle, shots});
    if (onlyWantsText(argc, argv)) {
        QCoreApplication core(argc, argv);
        setApplicationNames();
        parser.process(core);  // prints and exits
        return 0;
    }

    // Qt aborts (exit 134) when its X server does not answer: said first, with what to do.
    const auto environment = StudioEnvironment::read();
    if (const QString problem = lengen::studio::displayProblem(environment.display);
        !problem.isEmpty()) {
        std::fprintf(
            stderr,
            "lengen-studio: %s. The studio needs a display: start it where one is, or without a "
            "screen with QT_QPA_PLATFORM=offscreen (or xvfb-run); headless work needs only "
            "`lengen` (bash .ci/main runs the quick preset through it).\n",
            qPrintable(problem));
        return 4;
    }
    QApplication app(argc, argv);
    setApplicationNames();
    parser.process(app);

    lengen::studio::StudioOptions o;
    o.configRoot = findConfigRoot(environment.configs);
    o.preset = parser.isSet(preset) ? parser.value(preset)
                                    : o.configRoot + "/quick/linear_regression_rope.yaml";
    o.train = parser.isSet(train);
    o.steps = parser.value(steps).toInt();
    o.runsFolder = parser.value(runs);
    // The environment is read here, not in the engine; process-wide settings once.
    o.switches = lengen::engine::sessionSwitchesFromEnvironment();
    lengen::engine::applyProcessPolicy(o.switches);
    o.openRun = parser.value(open);
    if (parser.isSet(sweep))
        o.sweep = parser.value(sweep);
    if (parser.isSet(compare))
        o.compare = parser.value(compare).split(',', Qt::SkipEmptyParts);
    lengen::studio::MainWindow window(o);
    window.show();

    auto& controller = window.controller();
    const bool analyseAfter = parser.isSet(analyse);
    QObject::connect(&controller, &lengen::ui::RunController::runFinished, &window,
                     [&](const lengen::ui::JobInfo& job) {
                         if (analyseAfter && job.kind == lengen::ui::JobKind::Training) {
                             window.evaluateOpenRun();
                             window.probeOpenRun();
                         }
                     });
    const QString shotDir = parser.value(shots);
    if (parser.isSet(quitIdle) || parser.isSet(shots)) {
        auto finish = [&window, shotDir] {
            if (!shotDir.isEmpty())
                saveScreenshots(window, shotDir);
            QApplication::quit();
        };
        QObject::connect(&controller, &lengen::ui::RunController::stateChanged, &window,
                         [&controller, finish](lengen::ui::RunController::State s) {
                             if (s == lengen::ui::RunController::State::Idle &&
                                 controller.queuedCount() == 0)
                                 QTimer::singleShot(300, finish);
                         });
        if (!o.train)  // nothing will run: act once the window has shown
            QTimer::singleShot(500, finish);
    }
    return app.exec();
}

int main(int argc, char** argv)
{
    const int code = runStudio(argc, argv);  // the window, its jobs and QSettings are gone now
    // Without the libraries' exit handlers, as `lengen` (app/cli/main.cpp): HDF5 1.10's would
    // close a file whose flush failed on a full disk once more, and crash there.
    std::fflush(nullptr);
    std::_Exit(code);
}
