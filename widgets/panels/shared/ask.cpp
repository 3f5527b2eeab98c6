#include "ask.h"

#include <QAbstractButton>
#include <QFileDialog>
#include <QInputDialog>
#include <QMessageBox>

namespace lengen::ui::ask {

namespace {

// One file dialog: its answer is `fileSelected` (a folder's too, in Directory mode).
void openFileDialog(QWidget* parent, const QString& name, const QString& title, const QString& dir,
                    const QString& filter, QFileDialog::FileMode mode,
                    QFileDialog::AcceptMode accept, std::function<void(const QString&)> then)
{
    auto* dialog = new QFileDialog(parent, title, dir, filter);
    dialog->setObjectName(name);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setFileMode(mode);
    dialog->setAcceptMode(accept);
    if (mode == QFileDialog::Directory)
        dialog->setOption(QFileDialog::ShowDirsOnly);
    QObject::connect(dialog, &QFileDialog::fileSelected, dialog,
                     [then = std::move(then)](const QString& path) {
                         if (!path.isEmpty())
                             then(path);
                     });
    dialog->open();
}

}  // namespace

void openFile(QWidget* parent, const QString& title, const QString& dir, const QString& filter,
              std::function<void(const QString&)> then)
{
    openFileDialog(parent, QStringLiteral("ask-openFile"), title, dir, filter,
                   QFileDialog::ExistingFile, QFileDialog::AcceptOpen, std::move(then));
}

void saveFile(QWidget* parent, const QString& title, const QString& suggested,
              const QString& filter, std::function<void(const QString&)> then)
{
    // The static getSaveFileName asked before overwriting; this one does too (the dialog's own
    // confirmation, a destructive step).
    openFileDialog(parent, QStringLiteral("ask-saveFile"), title, suggested, filter,
                   QFileDialog::AnyFile, QFileDialog::AcceptSave, std::move(then));
}

void folder(QWidget* parent, const QString& title, const QString& dir,
            std::function<void(const QString&)> then)
{
    openFileDialog(parent, QStringLiteral("ask-folder"), title, dir, QString(),
                   QFileDialog::Directory, QFileDialog::AcceptOpen, std::move(then));
}

void integer(QWidget* parent, const QString& title, const QString& label, int value, int min,
             int max, int step, std::function<void(int)> then)
{
    auto* dialog = new QInputDialog(parent);
    dialog->setObjectName(QStringLiteral("ask-integer"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(title);
    dialog->setLabelText(label);
    dialog->setInputMode(QInputDialog::IntInput);
    dialog->setIntRange(min, max);
    dialog->setIntStep(step);
    dialog->setIntValue(value);
    QObject::connect(dialog, &QInputDialog::intValueSelected, dialog, std::move(then));
    dialog->open();
}

void tell(QWidget* parent, const QString& title, const QString& text, bool warning)
{
    auto* box = new QMessageBox(warning ? QMessageBox::Warning : QMessageBox::Information, title,
                                text, QMessageBox::Ok, parent);
    box->setObjectName(QStringLiteral("ask-tell"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

QDialog* confirm(QWidget* parent, const QString& title, const QString& text,
                 std::function<void()> then)
{
    auto* box = new QMessageBox(QMessageBox::Question, title, text,
                                QMessageBox::Yes | QMessageBox::No, parent);
    box->setObjectName(QStringLiteral("ask-confirm"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setDefaultButton(QMessageBox::Yes);
    // By the button, not `accepted`: a message box finishes with the button's value.
    QObject::connect(box, &QMessageBox::buttonClicked, box,
                     [box, then = std::move(then)](QAbstractButton* b) {
                         if (box->standardButton(b) == QMessageBox::Yes)
                             then();
                     });
    box->open();
    return box;
}

}  // namespace lengen::ui::ask
