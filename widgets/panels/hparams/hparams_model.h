#pragma once
// The Hyperparameters tab's choices, apart from its widgets (issue 70): what the user chose of
// the axes, the colour and the brushes, kept as chosen while the runs shown come and go. The
// table a build gets (the Runs list's rows, narrowed by its filter) may lack a chosen column
// for a while: the figure then leaves it out, and draws it again, with its brush, when a later
// table has it. What the user did not choose follows the runs (figures::defaultHParamsChoice).
// Plain values: a build on a worker thread takes a copy.

#include <string>
#include <vector>

#include "hparams_figure.h"
#include "lengen/engine/run_table.h"

namespace lengen::ui {

class HParamsModel {
public:
    /// What to draw for `table`: the defaults, with what the user chose in their place. Chosen
    /// columns the table lacks are included; figures::hparamsSpec leaves them out.
    figures::HParamsChoice choiceFor(const engine::RunTable& table) const;

    /// The axes menu's tick: `name` (a column of `table`) on or off. Chosen axes that `table`
    /// lacks stay chosen, where they were.
    void toggleAxis(const engine::RunTable& table, const std::string& name, bool on);
    /// An axis dragged by its name onto another's place (issue 72): `name` takes the place of
    /// `onto`, the axes between shift by one. The drawn order becomes the chosen one.
    void moveAxis(const engine::RunTable& table, const std::string& name, const std::string& onto);
    void chooseColor(std::string column);
    /// The brushes as the figure has them after a drag (by column name): those on columns that
    /// `drawn` shows replace the kept ones; kept brushes on columns not drawn now stay.
    void setBrushes(std::vector<figures::HParamsBrush> brushes,
                    const std::vector<std::string>& drawn);
    void clearBrushes();
    /// Everything chosen at once (a saved view, a test): axes, colour and brushes.
    void choose(const figures::HParamsChoice& choice);

    /// What a saved view records (issue 80 §1, defect 5: it recorded what a filter left drawn,
    /// the constant pe axis hidden and the colour fallen back): what the user chose — axes,
    /// colour, brushes, also those the runs shown lack — and `drawn` for what they did not.
    figures::HParamsChoice saved(const figures::HParamsChoice& drawn) const;

    bool axesChosen() const { return m_axesChosen; }
    bool colorChosen() const { return m_colorChosen; }
    /// The chosen axes, brushes kept (also those the current table lacks).
    const figures::HParamsChoice& kept() const { return m_kept; }
    /// Counts the user's choices: a build started before one must take the choices anew.
    unsigned revision() const { return m_revision; }

private:
    figures::HParamsChoice m_kept;
    bool m_axesChosen = false, m_colorChosen = false;
    unsigned m_revision = 0;
};

}  // namespace lengen::ui
