#pragma once
// The Save view dialog (issue 72): a name (an existing one replaces that view, and says so) and
// whether to share the view with the runs folder (its lengen-views.json, which a colleague who
// opens the folder and `lengen runs --view` read). Opens with open() like ask.h's dialogs, is
// deleted when it closes, and answers through `then` only when the user saves. Object name
// "ask-saveView". GUI thread only.

#include <QString>
#include <QStringList>

#include <functional>

class QWidget;

namespace lengen::ui {

/// `existing`: the saved views' names; `sharedFile`: where a shared view goes ("" when no
/// folder is followed: sharing is then off and says why).
void askSaveView(QWidget* parent, const QStringList& existing, const QString& sharedFile,
                 std::function<void(const QString& name, bool shared)> then);

}  // namespace lengen::ui
