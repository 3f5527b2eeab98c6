#pragma once
// The studio's dialogs that ask for a file, a folder or a number, or tell something: each
// opens with open() (window-modal, no nested event loop: jobs, timers and the Jobs panel run on
// while it is up) and answers through `then`, called only when the user chose. The dialog is
// a child of `parent` and deleted when it closes, so a `then` that captures the parent never
// runs after it. docs/architecture.md: static QFileDialog::get…, QInputDialog::get… and
// QMessageBox::question/… spin an event loop of their own and are kept for destructive
// confirmations only (tests/code_rules.sh checks it). GUI thread only.
//
// Each dialog has an object name (the function's, "ask-openFile", "ask-integer", …) so tests
// find it among the parent's children and answer it.

#include <QString>

#include <functional>

class QDialog;
class QWidget;

namespace lengen::ui::ask {

/// An existing file. `filter`: "YAML configs (*.yaml *.yml)".
void openFile(QWidget* parent, const QString& title, const QString& dir, const QString& filter,
              std::function<void(const QString& path)> then);

/// A file to write; `suggested` may name a folder and a file.
void saveFile(QWidget* parent, const QString& title, const QString& suggested,
              const QString& filter, std::function<void(const QString& path)> then);

/// An existing folder.
void folder(QWidget* parent, const QString& title, const QString& dir,
            std::function<void(const QString& dir)> then);

/// A whole number in [min, max].
void integer(QWidget* parent, const QString& title, const QString& label, int value, int min,
             int max, int step, std::function<void(int)> then);

/// A message with an OK button (a warning's icon when `warning`); nothing waits for it.
void tell(QWidget* parent, const QString& title, const QString& text, bool warning = false);

/// A question with Yes and No; `then` runs on Yes only. Returns the box (deleted when it closes:
/// hold it in a QPointer to know whether it is still up).
QDialog* confirm(QWidget* parent, const QString& title, const QString& text,
                 std::function<void()> then);

}  // namespace lengen::ui::ask
