// The studio's one config model (issue 13, defect 2 and the structure behind it): every shipped
// config survives load → form → save → load; a one-field edit in the form changes that field
// and nothing else; derived values stay derived; the form validates while typing and each text
// is parsed once; Train is disabled while the config is invalid; the preset box names what is
// shown and Save as… never proposes a shipped preset.

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDirIterator>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "config_draft.h"
#include "field_mark.h"
#include "lengen/engine/config.h"
#include "qcp.h"
#include "run_form.h"
#include "setup_panel.h"

using namespace lengen;

namespace {

QString configRoot() { return QStringLiteral(LENGEN_SOURCE_DIR "/configs"); }

QStringList shippedConfigs()
{
    QStringList files;
    for (const QString& dir : {QStringLiteral("quick"), QStringLiteral("tasks")}) {
        QDirIterator it(configRoot() + "/" + dir, {"*.yaml"}, QDir::Files,
                        dir == "tasks" ? QDirIterator::Subdirectories
                                       : QDirIterator::NoIteratorFlags);
        while (it.hasNext()) {
            const QString f = it.next();
            if (!f.contains("/parts/"))
                files << f;
        }
    }
    files << configRoot() + "/toy_task.yaml";
    files.sort();
    return files;
}

// The resolved YAML of every run a file describes: what training would use.
std::string resolved(const std::vector<engine::RunConfig>& runs)
{
    std::string all;
    for (const auto& r : runs)
        all += engine::toYaml(r) + "---\n";
    return all;
}

template <class Box>
Box* field(ui::SetupPanel& panel, const char* key)
{
    auto* w = qobject_cast<Box*>(panel.form()->fieldFor(key));
    if (!w)
        qFatal("no field for %s", key);
    return w;
}

QPushButton* button(ui::SetupPanel& panel, const QString& text)
{
    for (auto* b : panel.findChildren<QPushButton*>())
        if (b->text() == text)
            return b;
    qFatal("no button %s", qPrintable(text));
}

// Types `text` over a field's text as a user would, then Enter or focus leaving; returns what
// the field shows after (its verdict).
QString typeText(ui::SetupPanel& panel, QAbstractSpinBox* box, const QString& text, bool enter)
{
    box->setFocus();
    QApplication::processEvents();
    auto* edit = box->findChild<QLineEdit*>();
    edit->selectAll();
    QTest::keyClicks(box, text);
    if (enter)
        QTest::keyClick(box, Qt::Key_Return);
    else
        panel.findChild<QPushButton*>()->setFocus();  // focus leaves the field
    QApplication::processEvents();
    QApplication::processEvents();  // queued: the panel hears of the verdict after the event
    return edit->text();
}

}  // namespace

class TestConfigDraft final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void previewStopsWhereTrainingDoes();
    void everyShippedConfigRoundTripsThroughTheForm();
    void oneFieldEditChangesOnlyThatField();
    void derivedValuesStayDerived();
    void aMaxLengthListIsNeverCollapsed();
    void validatesWhileTypingAndParsesOnce();
    void numberFieldsRefuseWhatTheyCannotHold();
    void trainIsDisabledWhileInvalid();
    void runOverridesRefuseAndRefusalsHoldTrain();
    void randomPositionsFromTheForm();
    void presetBoxAndSaveAs();

private:
    QTemporaryDir m_tmp;
};

void TestConfigDraft::everyShippedConfigRoundTripsThroughTheForm()
{
    const QStringList files = shippedConfigs();
    QVERIFY(files.size() >= 80);  // 11 quick presets, the reference's 12 tasks × 7, the toy task
    int i = 0;
    for (const QString& file : files) {
        ui::SetupPanel panel(configRoot());
        QVERIFY2(panel.loadFile(file), qPrintable(file));
        QVERIFY2(panel.draft().valid(), qPrintable(file));
        // The form applied to the config it shows, written by the draft, saved, loaded again.
        engine::RunConfig c = panel.draft().config();
        panel.form()->applyTo(c);
        ui::ConfigDraft draft;
        QVERIFY2(draft.edit(c, "<form>", "test"), qPrintable(file));
        const QString saved = m_tmp.filePath(QStringLiteral("saved_%1.yaml").arg(i++));
        panel.setText(QString::fromStdString(draft.text()));
        QVERIFY(panel.saveFile(saved));
        const auto original = engine::loadConfigFile(file.toStdString()).runs;
        const auto back = engine::loadConfigFile(saved.toStdString()).runs;
        QCOMPARE(back.size(), original.size());  // a max_length list keeps all its runs
        QCOMPARE(QString::fromStdString(resolved(back)),
                 QString::fromStdString(resolved(original)));
    }
}

void TestConfigDraft::oneFieldEditChangesOnlyThatField()
{
    QDirIterator it(configRoot() + "/quick", {"*.yaml"}, QDir::Files);
    int presets = 0;
    while (it.hasNext()) {
        const QString file = it.next();
        ++presets;
        ui::SetupPanel panel(configRoot());
        QVERIFY(panel.loadFile(file));
        auto expected = engine::loadConfigFile(file.toStdString()).runs;
        auto* layers = field<QSpinBox>(panel, "model.num_hidden_layers");
        layers->setValue(layers->value() + 1);
        for (auto& r : expected)
            r.model.numLayers += 1;
        QVERIFY2(panel.draft().valid(), qPrintable(file));
        QCOMPARE(QString::fromStdString(resolved(panel.draft().runs())),
                 QString::fromStdString(resolved(expected)));
        // And a second field: the first edit's values are kept.
        auto* lr = field<QDoubleSpinBox>(panel, "training.learning_rate");
        lr->setValue(0.0025);
        for (auto& r : expected)
            r.training.learningRate = 0.0025;
        QCOMPARE(QString::fromStdString(resolved(panel.draft().runs())),
                 QString::fromStdString(resolved(expected)));
    }
    QCOMPARE(presets, 17);
    // The GPT-2 preset's dropout 0 (a key the old form did not write) survives an edit.
    ui::SetupPanel gpt(configRoot());
    QVERIFY(gpt.loadFile(configRoot() + "/quick/linear_regression_gpt2.yaml"));
    field<QSpinBox>(gpt, "model.n_layer")->setValue(3);
    QCOMPARE(gpt.draft().runs().at(0).model.residDropout, 0.0);
    QCOMPARE(gpt.draft().runs().at(0).model.attnDropout, 0.0);
    QVERIFY(gpt.text().contains("resid_pdrop: 0.0"));
}

void TestConfigDraft::aMaxLengthListIsNeverCollapsed()
{
    // The reference's GPT-2 config trains one run per max_length of its list [402, 2048]. The
    // field shows the list and is not editable; a value put into it anyway changes nothing (it
    // collapsed the list into one run of that value).
    ui::SetupPanel panel(configRoot());
    QVERIFY(panel.loadFile(configRoot() + "/tasks/linear_regression/gpt.yaml"));
    const auto before = panel.draft().runs();
    QVERIFY(before.size() >= 2);
    auto* maxLength = field<QDoubleSpinBox>(panel, "model.max_length");
    QVERIFY(!maxLength->isEnabled());
    QVERIFY2(maxLength->text().startsWith("["), qPrintable(maxLength->text()));
    maxLength->setValue(50);
    field<QSpinBox>(panel, "training.max_steps")->setValue(123);
    const auto after = panel.draft().runs();
    QCOMPARE(after.size(), before.size());
    for (size_t i = 0; i < after.size(); ++i) {
        QCOMPARE(after[i].model.maxLength, before[i].model.maxLength);
        QCOMPARE(after[i].training.maxSteps, 123);
    }
}

void TestConfigDraft::derivedValuesStayDerived()
{
    // The issue's sequence: RoPE preset → yarn → 4 layers → max_length 40 → 26.
    ui::SetupPanel panel(configRoot());
    QVERIFY(panel.loadFile(configRoot() + "/quick/linear_regression_rope.yaml"));
    auto* pe = field<QComboBox>(panel, "patch.rope_scaling.type");
    // Named as researchers write them (issue 13), the config's name beside where it differs.
    QCOMPARE(pe->itemText(pe->findData(QStringLiteral("linear"))), QStringLiteral("PI (linear)"));
    QCOMPARE(pe->itemText(pe->findData(QStringLiteral("dynamic"))),
             QStringLiteral("Dynamic NTK (dynamic)"));
    QCOMPARE(pe->itemText(pe->findData(QStringLiteral("alibi"))), QStringLiteral("ALiBi"));
    pe->setCurrentIndex(pe->findData(QStringLiteral("yarn")));
    field<QSpinBox>(panel, "model.num_hidden_layers")->setValue(4);
    auto* maxLength = field<QDoubleSpinBox>(panel, "model.max_length");
    maxLength->setValue(40);
    QCOMPARE(*panel.draft().runs().at(0).position.factor, 40.0 / 9 / 2 * 8);
    maxLength->setValue(26);
    const auto& run = panel.draft().runs().at(0);
    QCOMPARE(run.position.type, std::string("yarn"));
    QCOMPARE(run.model.numLayers, 4);
    QCOMPARE(*run.position.factor, 26.0 / 9 / 2 * 8);  // 11.56, as `lengen validate` derives
    QVERIFY2(!panel.text().contains("factor:"), qPrintable(panel.text()));
    // What the editor shows loads, by itself, to the same run.
    const auto fromText = engine::loadConfigText(panel.text().toStdString(), "<text>").runs;
    QCOMPARE(engine::toYaml(fromText.at(0)), engine::toYaml(run));
    // A factor the user wrote stays: it is theirs.
    panel.setText(panel.text().replace("{type: yarn}", "{type: yarn, factor: 5}"));
    QVERIFY(panel.validate().isEmpty());
    maxLength->setValue(30);
    QCOMPARE(*panel.draft().runs().at(0).position.factor, 5.0);
    // intermediate_size follows the width unless it was written.
    auto* hidden = field<QSpinBox>(panel, "model.hidden_size");
    hidden->setValue(32);
    QCOMPARE(panel.draft().runs().at(0).model.intermediateSize, 128);
}

void TestConfigDraft::validatesWhileTypingAndParsesOnce()
{
    ui::SetupPanel panel(configRoot());
    panel.show();
    QVERIFY(panel.loadFile(configRoot() + "/quick/linear_regression_alibi.yaml"));
    auto* heads = field<QSpinBox>(panel, "model.num_attention_heads");
    heads->setFocus();
    auto* edit = heads->findChild<QLineEdit*>();
    QVERIFY(edit);
    edit->selectAll();
    const int before = panel.draft().parses();
    QTest::keyClicks(heads, "5");                  // no Enter, no focus change
    QCOMPARE(panel.draft().parses(), before + 1);  // one edit, one parse
    QVERIFY(!panel.draft().valid());
    QVERIFY(lengen::ui::isMarkedRefused(heads));
    QVERIFY(panel.text().contains("num_attention_heads: 5"));
    // Messages name the edited text, at lines of the text the editor shows.
    const auto& issue = panel.draft().issues().at(0);
    QVERIFY2(QString::fromStdString(issue.where.file).startsWith("editor (edited from"),
             issue.where.file.c_str());
    QVERIFY(panel.text().split('\n').value(issue.where.line - 1).contains("num_attention_heads"));
    QVERIFY(panel.hasUnsavedEdits());
    edit->selectAll();
    QTest::keyClicks(heads, "4");
    QVERIFY(panel.draft().valid());
    const int parsed = panel.draft().parses();
    QVERIFY(panel.request().has_value());
    QCOMPARE(panel.draft().parses(), parsed);  // Train does not parse the same text again
}

// Issue 41, defect 5: "-500" steps became 500 and "1e9" hidden became 19. Typed text a field
// cannot hold is kept and shown refused; the config keeps the value from before the edit.
void TestConfigDraft::numberFieldsRefuseWhatTheyCannotHold()
{
    ui::SetupPanel panel(configRoot());
    panel.show();
    QVERIFY(panel.loadFile(configRoot() + "/quick/linear_regression_rope.yaml"));
    const auto before = panel.draft().runs().at(0);
    auto typeInto = [&](QAbstractSpinBox* box, const QString& text, bool enter) {
        return typeText(panel, box, text, enter);
    };
    auto* steps = field<QSpinBox>(panel, "training.max_steps");
    auto* hidden = field<QSpinBox>(panel, "model.hidden_size");
    auto* lr = field<QDoubleSpinBox>(panel, "training.learning_rate");
    QCOMPARE(typeInto(steps, "-500", true), QString("-500 ✗ not applied"));
    QVERIFY2(steps->toolTip().contains("below the smallest value"), qPrintable(steps->toolTip()));
    QCOMPARE(panel.draft().runs().at(0).training.maxSteps, before.training.maxSteps);
    QCOMPARE(typeInto(hidden, "1e9", false), QString("1e9 ✗ not applied"));
    QVERIFY2(hidden->toolTip().contains("1e9 is above the largest value, 8192"),
             qPrintable(hidden->toolTip()));
    QCOMPARE(hidden->value(), before.model.hiddenSize);  // not 1, the prefix typed on the way
    QCOMPARE(panel.draft().runs().at(0).model.hiddenSize, before.model.hiddenSize);
    QVERIFY(panel.draft().valid());
    // A learning rate in scientific notation is a number.
    typeInto(lr, "3e-4", true);
    QCOMPARE(panel.draft().runs().at(0).training.learningRate, 3e-4);
    QVERIFY(!lengen::ui::isMarkedRefused(lr));
    // Another field's accepted edit re-validates the config: the refusals stay shown as such
    // (they lost their colour and tooltip but kept "✗ not applied" before).
    QVERIFY(lengen::ui::isMarkedRefused(hidden));
    QVERIFY(hidden->toolTip().contains("above the largest value"));
    QVERIFY(lengen::ui::isMarkedRefused(steps));
    QCOMPARE(typeInto(hidden, "2.5", false), QString("2.5 ✗ not applied"));
    QVERIFY2(hidden->toolTip().contains("2.5 is not a whole number"),
             qPrintable(hidden->toolTip()));
    // Review: "1e3" is a whole number (it was the "1" typed on the way, kept silently), a value
    // the field cannot hold at its decimals is refused (0.0004 warm-up became 0.000), and a
    // learning rate keeps its digits (3e-7 became 0).
    typeInto(steps, "1e3", true);
    QCOMPARE(panel.draft().runs().at(0).training.maxSteps, std::int64_t(1000));
    auto* warmup = field<QDoubleSpinBox>(panel, "training.warmup_ratio");
    const double warmupBefore = panel.draft().runs().at(0).training.warmupRatio;
    QCOMPARE(typeInto(warmup, "0.0004", true), QString("0.0004 ✗ not applied"));
    QVERIFY2(warmup->toolTip().contains("needs more than the field's 3 decimal"),
             qPrintable(warmup->toolTip()));
    QCOMPARE(panel.draft().runs().at(0).training.warmupRatio, warmupBefore);
    typeInto(lr, "3e-7", true);
    QCOMPARE(panel.draft().runs().at(0).training.learningRate, 3e-7);
    // Typing a valid value clears the refusal.
    QCOMPARE(typeInto(steps, "1234", true), QString("1234"));
    QCOMPARE(panel.draft().runs().at(0).training.maxSteps, std::int64_t(1234));
    QVERIFY(!lengen::ui::isMarkedRefused(steps));
    // Issue 80: the mark comes at the keystroke that makes the text unusable, with the reason,
    // and goes when the text is usable again, before any Enter; the field's own tooltip returns.
    const QString ownTip = steps->toolTip();
    steps->setFocus();
    steps->findChild<QLineEdit*>()->selectAll();
    QTest::keyClicks(steps, "-5");
    QVERIFY(lengen::ui::isMarkedRefused(steps));
    QVERIFY2(steps->toolTip().contains("below the smallest value"), qPrintable(steps->toolTip()));
    QTest::keyClick(steps, Qt::Key_Backspace);
    QTest::keyClick(steps, Qt::Key_Backspace);
    QTest::keyClicks(steps, "700");
    QVERIFY(!lengen::ui::isMarkedRefused(steps));
    QCOMPARE(steps->toolTip(), ownTip);
    // No field is marked through a style sheet: one with a border draws a spin box's arrows
    // and a combo's drop-down as "≡" under Fusion.
    for (auto* w : panel.findChildren<QWidget*>())
        QVERIFY2(w->styleSheet().isEmpty(), qPrintable(w->objectName()));
}

// The Training group's "Random positions up to" writes training.random_positions; an encoding
// that reads no positions refuses it on that field, and "off" (0) takes it back.
void TestConfigDraft::randomPositionsFromTheForm()
{
    ui::SetupPanel panel(configRoot());
    QVERIFY(panel.loadFile(configRoot() + "/quick/linear_regression_alibi.yaml"));
    auto* random = field<QSpinBox>(panel, "training.random_positions.max_position");
    QCOMPARE(random->value(), 0);
    QVERIFY(random->isEnabled());
    random->setValue(144);
    QVERIFY(panel.draft().valid());
    QCOMPARE(panel.draft().runs().at(0).training.randomPositions, std::int64_t(144));
    QVERIFY2(panel.text().contains("random_positions: {max_position: 144}"),
             qPrintable(panel.text()));
    auto* pe = field<QComboBox>(panel, "patch.rope_scaling.type");
    pe->setCurrentIndex(pe->findData(QStringLiteral("nope")));
    QVERIFY(!panel.draft().valid());
    QVERIFY(!button(panel, QStringLiteral("Train"))->isEnabled());
    QVERIFY2(random->toolTip().contains("reads no token positions"), qPrintable(random->toolTip()));
    random->setValue(0);
    QVERIFY(panel.draft().valid());
    QVERIFY(!random->isEnabled());  // NoPE: nothing to randomize
}

// Issue 52, item 2: the Steps box beside Train refuses what it cannot hold (-500 became 500,
// 1e9 became 19, 2.5 became 25); Train waits while any field shows a refused value, naming it;
// loading another preset clears the refusals (their red frame stayed).
void TestConfigDraft::runOverridesRefuseAndRefusalsHoldTrain()
{
    ui::SetupPanel panel(configRoot());
    panel.show();
    QVERIFY(panel.loadFile(configRoot() + "/quick/linear_regression_rope.yaml"));
    QSpinBox* steps = nullptr;
    for (auto* box : panel.findChildren<QSpinBox*>())
        if (box->specialValueText() == QStringLiteral("as configured"))
            steps = box;
    QVERIFY(steps);
    auto* train = button(panel, QStringLiteral("Train"));
    for (const char* typed : {"-500", "1e9", "2.5"}) {
        QCOMPARE(typeText(panel, steps, typed, true), QString(typed) + " ✗ not applied");
        QCOMPARE(steps->value(), 0);  // still "as configured"
        QVERIFY(!train->isEnabled());
        QVERIFY2(train->toolTip().contains(QStringLiteral("Steps “%1”").arg(typed)),
                 qPrintable(train->toolTip()));
        QVERIFY(!panel.request().has_value());
        // The curriculum preview still draws the last applied steps: its axis says so (N6).
        QVERIFY2(panel.form()->previewAxisLabel().contains(
                     QStringLiteral("Steps “%1” not applied").arg(typed)),
                 qPrintable(panel.form()->previewAxisLabel()));
    }
    QCOMPARE(typeText(panel, steps, "1e3", true), QString("1000"));
    QCOMPARE(panel.form()->previewAxisLabel(), QString("step"));
    QCOMPARE(steps->value(), 1000);
    QVERIFY(train->isEnabled());
    QCOMPARE(*panel.request()->options.maxSteps, std::int64_t(1000));

    auto* hidden = field<QSpinBox>(panel, "model.hidden_size");
    QCOMPARE(typeText(panel, hidden, "-5", false), QString("-5 ✗ not applied"));
    QVERIFY(panel.draft().valid());  // the config kept its value: it would train, but not -5
    QVERIFY(!train->isEnabled());
    QVERIFY2(train->toolTip().contains("model.hidden_size “-5”"), qPrintable(train->toolTip()));
    QCOMPARE(panel.refusedFields(), QStringList{"model.hidden_size “-5”"});
    QVERIFY(!panel.request().has_value());
    // The editor setting another value replaces the refusal (Train stayed disabled, naming -5).
    panel.setText(
        QStringLiteral("model:\n  family: Llama2\n  max_length: [14]\n  hidden_size: 16\n"
                       "  num_hidden_layers: 2\n  num_attention_heads: 2\ntask:\n  data: gaussian\n"
                       "  name: linear_regression\n  curriculum:\n"
                       "    dims: {start: 2, end: 3, increment: 1, interval: 10}\n"
                       "    points: {start: 5, end: 7, increment: 2, interval: 10}\n"
                       "training:\n  max_steps: 20\n"));
    QVERIFY(panel.validate().isEmpty());
    QCOMPARE(hidden->value(), 16);
    QVERIFY(panel.refusedFields().isEmpty());
    QVERIFY(train->isEnabled());
    QCOMPARE(typeText(panel, hidden, "-5", false), QString("-5 ✗ not applied"));
    // Another preset: its values stand, the refusal and its frame are gone, Train is back.
    QVERIFY(panel.loadFile(configRoot() + "/quick/linear_regression_alibi.yaml"));
    QVERIFY(!lengen::ui::isMarkedRefused(hidden));
    QVERIFY(!hidden->text().contains("not applied"));
    QCOMPARE(hidden->value(), 64);
    QVERIFY(panel.refusedFields().isEmpty());
    QVERIFY(train->isEnabled());
    QVERIFY(panel.request().has_value());
    // Issue 70, defect 5: refusals in Steps and Seed outlived a preset change (both red, Train
    // disabled); an emptied Steps box went back to its last number, not "as configured".
    QCOMPARE(typeText(panel, steps, "1e9", true), QString("1e9 ✗ not applied"));
    QVERIFY(!train->isEnabled());
    QVERIFY(panel.loadFile(configRoot() + "/quick/linear_regression_rope.yaml"));
    QVERIFY(!steps->text().contains("not applied"));
    QVERIFY(panel.refusedFields().isEmpty());
    QVERIFY(train->isEnabled());
    QCOMPARE(steps->value(), 1000);  // the override it held stays
    steps->setFocus();
    QApplication::processEvents();
    steps->findChild<QLineEdit*>()->selectAll();
    QTest::keyClick(steps, Qt::Key_Backspace);
    QTest::keyClick(steps, Qt::Key_Return);
    QApplication::processEvents();
    QCOMPARE(steps->value(), 0);
    QCOMPARE(steps->text(), QStringLiteral("as configured"));
    QVERIFY(!panel.request()->options.maxSteps.has_value());
}

void TestConfigDraft::trainIsDisabledWhileInvalid()
{
    ui::SetupPanel panel(configRoot());
    QVERIFY(panel.loadFile(configRoot() + "/quick/linear_regression_rope.yaml"));
    auto* train = button(panel, QStringLiteral("Train"));
    QVERIFY(train->isEnabled());
    field<QSpinBox>(panel, "model.num_attention_heads")->setValue(5);  // 64 % 5 != 0
    QVERIFY(!train->isEnabled());
    QVERIFY(train->toolTip().contains("problems"));
    field<QSpinBox>(panel, "model.num_attention_heads")->setValue(2);  // back to the preset's value
    QVERIFY(train->isEnabled());  // (it was ignored: the field still counted as untouched)
    QVERIFY(panel.text().contains("num_attention_heads: 2"));
    panel.setText(QStringLiteral("model: [unclosed"));
    panel.validate();
    QVERIFY(!train->isEnabled());
}

void TestConfigDraft::presetBoxAndSaveAs()
{
    ui::SetupPanel panel(configRoot());
    auto* box = panel.findChild<QComboBox*>();
    QVERIFY(panel.loadFile(configRoot() + "/quick/linear_regression_nope.yaml"));
    QVERIFY(box->currentText().contains("linear_regression_nope"));
    // A shipped preset is not the default target of Save as….
    QVERIFY(!panel.defaultSavePath().startsWith(configRoot()));
    QVERIFY(panel.defaultSavePath().endsWith("linear_regression_nope.yaml"));
    // Issue 41, defect 7: the name comes from what the config trains, not from the preset.
    field<QComboBox>(panel, "patch.rope_scaling.type")
        ->setCurrentIndex(field<QComboBox>(panel, "patch.rope_scaling.type")->findData("alibi"));
    QVERIFY(panel.draft().valid());
    QVERIFY2(panel.defaultSavePath().endsWith("/linear_regression_alibi.yaml"),
             qPrintable(panel.defaultSavePath()));
    // Open… a file of the user's: the box names it, and Save as… proposes it.
    const QString mine = m_tmp.filePath("mine.yaml");
    QVERIFY(panel.saveFile(mine));
    QVERIFY2(box->currentText().contains("mine.yaml"), qPrintable(box->currentText()));
    QVERIFY(!panel.hasUnsavedEdits());
    QVERIFY(panel.loadFile(configRoot() + "/quick/linear_regression_rope.yaml"));
    QVERIFY(box->currentText().contains("linear_regression_rope"));
    QVERIFY(panel.loadFile(mine));
    QVERIFY(box->currentText().contains("mine.yaml"));
    QCOMPARE(panel.defaultSavePath(), QFileInfo(mine).absoluteFilePath());
}

// Issue 52 and issue 80, defect 13: 1500 steps of the quick preset end before its curriculum
// does; the summary says with which numbers, the curriculum preview stops where training does,
// and each of its curves that stops short says where.
void TestConfigDraft::previewStopsWhereTrainingDoes()
{
    ui::SetupPanel panel(configRoot());
    QVERIFY(panel.loadFile(configRoot() + "/quick/linear_regression_rope.yaml"));
    panel.setSteps(1500);
    QVERIFY2(
        panel.summaryText().contains("the curriculum reaches 9 points at step 1600") &&
            panel.summaryText().contains("with 1500 steps training ends at 7 points and 3 dims"),
        qPrintable(panel.summaryText()));
    QCOMPARE(panel.form()->previewEnd().step, std::int64_t(1499));
    QCOMPARE(panel.form()->previewEnd().points, 7);
    QCOMPARE(panel.form()->previewEnd().dims, 3);
    // Each curve that stops short says where (defect 13: the dims curve said nothing).
    auto* preview = panel.form()->findChild<QCustomPlot*>();
    QVERIFY(preview && preview->graphCount() >= 2);
    QStringList names;
    for (int i = 0; i < preview->graphCount(); ++i)
        names << preview->graph(i)->name();
    QVERIFY2(names.contains("points (ends at 7 of 9)"), qPrintable(names.join(", ")));
    QVERIFY2(names.contains("dims (ends at 3 of 4)"), qPrintable(names.join(", ")));
}

QTEST_MAIN(TestConfigDraft)
#include "tst_config_draft.moc"
