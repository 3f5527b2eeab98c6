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
#include "studio_style.h"

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

// The studio's command-line options, in the order --help lists them.
struct StudioCommandLine {
    QCommandLineOption preset{"preset", "Run config to load into the setup panel.", "config"};
    QCommandLineOption train{"train", "Start training the loaded config at once."};
    QCommandLineOption steps{"steps", "Override training.max_steps.", "n"};
    QCommandLineOption runs{"runs", "Folder for new runs and the run browser (default: runs).",
                            "dir", "runs"};
    QCommandLineOption open{"open",
                            "Open this run (folder or run.h5), or add a folder of runs "
                            "(a models/ folder of the Python code offers their import).",
                            "run"};
    QCommandLineOption compare{"compare",
                               "Overlay these runs (comma-separated) in the Compare tab.", "runs"};
    QCommandLineOption sweep{"sweep",
                             "Show this sweep folder (lengen sweep new) in the Sweeps tab.", "dir"};
    QCommandLineOption analyse{"analyse", "After training: evaluate and probe the new run."};
    QCommandLineOption quitIdle{"quit-when-idle", "Quit once every queued job has ended."};
    QCommandLineOption shots{"screenshots",
                             "Save a screenshot of every tab into this folder "
                             "(after queued jobs end), then quit.",
                             "dir"};
};

// Gives the parser the studio's description, --help, --version and the options of `cli`.
void describeStudioCommandLine(QCommandLineParser& parser, const StudioCommandLine& cli)
{
    parser.setApplicationDescription(QStringLiteral(
        "LenGen Studio: train, evaluate and probe in-context function learners and see how "
        "position encodings decide length generalization."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions({cli.preset, cli.train, cli.steps, cli.runs, cli.open, cli.compare, cli.sweep,
                       cli.analyse, cli.quitIdle, cli.shots});
}

// Says on stderr why no display will answer, if one will not; true then.
bool reportMissingDisplay(const StudioEnvironment& environment)
{
    const QString problem = lengen::studio::displayProblem(environment.display);
    if (problem.isEmpty())
        return false;
    std::fprintf(
        stderr,
        "lengen-studio: %s. The studio needs a display: start it where one is, or without a "
        "screen with QT_QPA_PLATFORM=offscreen (or xvfb-run); headless work needs only "
        "`lengen` (bash .ci/main runs the quick preset through it).\n",
        qPrintable(problem));
    return true;
}

// The window's options from the parsed command line; applies the process-wide session settings.
lengen::studio::StudioOptions studioOptions(const QCommandLineParser& parser,
                                            const StudioCommandLine& cli,
                                            const StudioEnvironment& environment)
{
    lengen::studio::StudioOptions o;
    o.configRoot = findConfigRoot(environment.configs);
    o.preset = parser.isSet(cli.preset) ? parser.value(cli.preset)
                                        : o.configRoot + "/quick/linear_regression_rope.yaml";
    o.train = parser.isSet(cli.train);
    o.steps = parser.value(cli.steps).toInt();
    o.runsFolder = parser.value(cli.runs);
    // The environment is read here, not in the engine; process-wide settings once.
    o.switches = lengen::engine::sessionSwitchesFromEnvironment();
    lengen::engine::applyProcessPolicy(o.switches);
    o.openRun = parser.value(cli.open);
    if (parser.isSet(cli.sweep))
        o.sweep = parser.value(cli.sweep);
    if (parser.isSet(cli.compare))
        o.compare = parser.value(cli.compare).split(',', Qt::SkipEmptyParts);
    return o;
}

// --analyse: each finished training job is evaluated and probed in the window.
void analyseAfterTraining(lengen::studio::MainWindow& window, bool analyseAfter)
{
    QObject::connect(&window.controller(), &lengen::ui::RunController::runFinished, &window,
                     [&window, analyseAfter](const lengen::ui::JobInfo& job) {
                         if (analyseAfter && job.kind == lengen::ui::JobKind::Training) {
                             window.runJobActions().evaluateOpenRun();
                             window.runJobActions().probeOpenRun();
                         }
                     });
}

// --quit-when-idle, --screenshots: once no job runs or waits, save the screenshots and quit.
void quitWhenIdle(lengen::studio::MainWindow& window, const QString& shotDir, bool startsTraining)
{
    auto& controller = window.controller();
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
    if (!startsTraining)  // nothing will run: act once the window has shown
        QTimer::singleShot(500, finish);
}

}  // namespace

static int runStudio(int argc, char** argv)
{
    QCommandLineParser parser;
    const StudioCommandLine cli;
    describeStudioCommandLine(parser, cli);
    if (onlyWantsText(argc, argv)) {
        QCoreApplication core(argc, argv);
        setApplicationNames();
        parser.process(core);  // prints and exits
        return 0;
    }

    // Qt aborts (exit 134) when its X server does not answer: said first, with what to do.
    const auto environment = StudioEnvironment::read();
    if (reportMissingDisplay(environment))
        return 4;
    QApplication app(argc, argv);
    lengen::ui::installStudioStyle();
    setApplicationNames();
    parser.process(app);

    const lengen::studio::StudioOptions o = studioOptions(parser, cli, environment);
    lengen::studio::MainWindow window(o);
    window.show();

    analyseAfterTraining(window, parser.isSet(cli.analyse));
    const QString shotDir = parser.value(cli.shots);
    if (parser.isSet(cli.quitIdle) || parser.isSet(cli.shots))
        quitWhenIdle(window, shotDir, o.train);
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
